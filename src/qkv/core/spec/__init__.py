"""What a model and a run are, declared: ModelConfig, TrainConfig and the presets (config), and the
model families with what each can do (family). Every other part asks these instead of testing strings."""
