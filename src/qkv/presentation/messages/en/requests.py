"""The explorer server's refusals of a request, in English (the same keys as zh/requests.py).

Said in {"error": ..., "status": ...} answers (qkv.apps.web.requests). The v_* messages are pydantic's
own words for each error type (what the server answered before the catalogue held them), with the
numbers of pydantic's context as {fields}; json_* are the json module's. A {field} that names a place
in the body ({where}: "text", "heads.0", "query.limit") is a field name, written as it is.
"""

MESSAGES = {
    # ------------------------------------------------------------------ HTTP
    "http_404": "Not Found",
    "http_405": "Method Not Allowed",
    "too_large": "the request body is larger than the {limit:,} bytes this endpoint takes",
    "wrong_host": "this server answers requests to {hosts} only",
    "no_asset": "no asset {name}",
    "internal": "internal error: {kind}: {detail}",
    "bad_request": "bad request",
    # ------------------------------------------------------------------ the body
    "no_body": "the request has no body: send a JSON object",
    "not_object": "the body must be a JSON object (with Content-Type: application/json)",
    "not_json": "the body is not valid JSON (at character {at}: {why})",
    "json_value": "Expecting value",
    "json_name": "Expecting property name enclosed in double quotes",
    "json_comma": "Expecting ',' delimiter",
    "json_colon": "Expecting ':' delimiter",
    "json_extra": "Extra data",
    "json_string": "Unterminated string starting at",
    "json_control": "Invalid control character at",
    "text_or_ids": "give either text or ids",
    "at": "{where}: {error}",
    "either": "{first} or {last}",
    # ------------------------------------------------------------------ a field's value (pydantic's error types)
    "v_missing": "Field required",
    "v_extra_forbidden": "Extra inputs are not permitted",
    "v_string_type": "Input should be a valid string",
    "v_int_type": "Input should be a valid integer",
    "v_int_parsing": "Input should be a valid integer, unable to parse string as an integer",
    "v_float_type": "Input should be a valid number",
    "v_float_parsing": "Input should be a valid number, unable to parse string as a number",
    "v_finite_number": "Input should be a finite number",
    "v_bool_type": "Input should be a valid boolean",
    "v_list_type": "Input should be a valid list",
    "v_dict_type": "Input should be a valid dictionary",
    "v_model_attributes_type": "Input should be a valid dictionary or object to extract fields from",
    "v_string_too_long": "String should have at most {max_length} characters",
    "v_too_long": "{field_type} should have at most {max_length} items after validation, not {actual_length}",
    "v_too_short": "{field_type} should have at least {min_length} items after validation, not {actual_length}",
    "v_greater_than_equal": "Input should be greater than or equal to {ge}",
    "v_less_than_equal": "Input should be less than or equal to {le}",
    "v_greater_than": "Input should be greater than {gt}",
    "v_less_than": "Input should be less than {lt}",
    "v_string_pattern_mismatch": "String should match pattern '{pattern}'",
    "v_literal_error": "Input should be {expected}",
}
