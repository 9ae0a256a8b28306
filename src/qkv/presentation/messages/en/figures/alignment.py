"""Cross-attention of a translation model as an alignment (qkv figure alignment) (English)."""

MESSAGES = {
    "head_title": "Cross-attention, decoder layer {layer}, head {head}",
    "mean_title": "the {n} heads averaged",
    "head": "head {head}",
    "grid_title": "Cross-attention of decoder layer {layer}: which source words each target word reads",
    "target": "target word (written at this step)",
    "source": "source word",
    "weight": "attention weight (each row sums to 1)",
    "caption": "Row: the target word a decoder step writes; its query comes from the decoder. Column: a source word; "
    "its key and value come from the encoder.",
    "gold": "Red squares: the corpus's gold alignment (which source word each target word translates).",
    "no_pair": "No gold alignment: the source is not one of the corpus's sentences.",
    "differs": "No gold alignment: the model's translation differs from the corpus's.",
    "hull_title": "Decoder layer {layer}, cross-attention head {head}: z of target step {pos} “{tok}” among "
    "the source values",
}
