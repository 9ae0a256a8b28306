"""What crosses qkv's edge: files written whole (files), JSON documents and their header (document),
numbers that are not numbers (finite), and refusals a user reads in zh or en (refusal)."""
