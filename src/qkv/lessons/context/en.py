"""Lesson "context": one word, two contexts, and what attention makes of it (English)."""

MESSAGES = {
    "title": "One word, two contexts: attention makes 苹果 depend on its neighbours",
    "text": "A token enters the model as one row of the embedding table W_E, and that row does not know\n"
    "which sentence it is in. Take “{fruit}” (ate) and “{company}” (invested in): 苹果 is at\n"
    "position {position} (counting from 0) in both, and its input vector is the same in both: cosine\n"
    "{embed_cosine:.6f}, largest difference between coordinates {embed_max_abs_diff:g}. Any fixed map "
    "x -> xW sends equal\n"
    "inputs to equal outputs, so nothing computed from this vector alone can tell the fruit from\n"
    "the company.\n"
    "\n"
    "Attention is what lets the other tokens in: z_i = Σ_j a_ij x_j W_V blends the vectors of the\n"
    "tokens up to i, and each block adds the result back, x_i + z_i W_O. Cosine of the two 苹果\n"
    "vectors at each stage of the residual stream (“L0 in” is embedding plus position):\n"
    "{cos_table}\n"
    "In the trained model they start identical and part from the first block on; the lowest cosine\n"
    "is {cmin:.4f}, at {cmin_at}. They stay close because most of each vector is still what 苹果 itself\n"
    "brought in. What attention writes at 苹果 (hook_attn_out, Σ_h z_h W_O[h]) differs much more:\n"
    "{attn_table}\n"
    "and the trained heads know where to look: the largest weight a head puts from 苹果 on the cue\n"
    "word is {cue_f:.2f} on 吃了 and {cue_c:.2f} on 投资了 (layer {cue_layer}); in the untrained model no head\n"
    "gives the cue more than {untrained_max_cue_weight:.2f}, about 1/{n_visible} of its attention, as if "
    "spread evenly.\n"
    "\n"
    "Does the difference carry the sense? A linear probe (logistic regression) was fitted on the\n"
    "vector of the ambiguous word (苹果, 小米 or 黑莓, read at the word itself, before the comma)\n"
    "in {n_probe_train} corpus sentences, labelled fruit or company by how each sentence goes on, and\n"
    "scored on {n_probe_test} held-out probe sentences whose frames the corpus never uses (chance: 0.5):\n"
    "{probe_table}\n"
    "At the bare embedding the probe can only guess ({p_embed:.3f}): the same word always gives the\n"
    "same vector. The trained model's best stage is {best} ({best_probe_accuracy:.3f}).\n"
    "\n"
    "What the model predicts after the comma (top {top}):\n"
    "  trained,   “{fruit} ，”   {nf}\n"
    "  trained,   “{company} ，” {nc}\n"
    "  untrained, “{fruit} ，”   {unf}\n"
    "  untrained, “{company} ，” {unc}\n"
    "(spread evenly, each of the {d_vocab} tokens would get {uniform_probability:.4f}). On all "
    "{n_continuation_probes} held-out\n"
    "sense probes the trained model gives the right continuation a higher probability than the\n"
    "other sense's in {continuation_accuracy:.1%} of the cases, the untrained one in "
    "{untrained_continuation_accuracy:.1%}.\n"
    "\n"
    "{patch_paragraph}\n"
    "\n"
    "The formula alone does not make z useful. The untrained model mixes context too (its last\n"
    "cosine is {ucos_last:.4f}): even random, near-even attention averages the earlier tokens in, so a\n"
    "probe that is itself trained on labelled examples can read the sense from it up to\n"
    "{untrained_best_probe_accuracy:.3f}. But the model cannot use it: its next-word guesses are almost flat{u_same}.\n"
    "z is just a vector of numbers, and no coordinate of it means 'fruit'; it is\n"
    "training that shapes W_Q, W_K, W_V, W_O and the layers after them until what attention\n"
    "gathers lowers the prediction error.",
    "headline": "cosine of 苹果 between the two sentences: {embed_cosine:.3f} at the embedding, {clast:.3f} after "
    "the last block (untrained {ucos_last:.3f}); probe accuracy {best_probe_accuracy:.3f} at {best} (untrained best "
    "{untrained_best_probe_accuracy:.3f}); next word {f1} vs {c1}",
    "same_first": ", with the same first word in both contexts",
    "col_stage": "stage",
    "col_trained": "trained",
    "col_untrained": "untrained",
    "stage_embed": "embed",
    "stage_layer": "L{layer}",
    "stage_in": "L{layer} in",
    "stage_out": "L{layer} out",
    "cos_title": "苹果 in “{a}” vs “{b}”",
    "cos_y": "cosine similarity",
    "probe_title": "Linear probe: fruit or company? (held-out)",
    "probe_y": "accuracy",
    "x": "stage (residual stream)",
    "trained": "trained",
    "untrained": "untrained",
    "chance": "chance",
    "patch_intro": "Which heads carry the sense? A weight in A says where a head looks, not "
    "what its output does, so here the lesson intervenes (activation patching). “{pf}” and “{pc}” have the "
    "same length ({patch_len} tokens). One of them is run with the z of one head, at every position, taken "
    "from the run on the other, and at the comma we measure how far the next-word distribution moves: its "
    "total variation distance from the unpatched run (the two unpatched runs are {clean_tv:.3f} apart), and "
    "how much of the way the probability of the other sense's continuations goes, from this sentence's value "
    "to the other's (0%: nothing moved, 100%: all the way; the first words the corpus continues with: {fw} "
    "for the fruit, {cw} for the company). Unpatched, “{pf}” puts {m_ff:.3f} on the fruit's words and {m_fc:.3f} "
    "on the company's, “{pc}” {m_cf:.3f} and {m_cc:.3f}. The share of each head, the fruit sentence run with "
    "the company sentence's head / the other way round:",
    "patch_skipped": "(The patching experiment is left out for this model: its tokenizer does not give “{pf}” "
    "and “{pc}” the same number of tokens, or has no continuation word of each sense as one token.)",
    "patch_no_head_decides": "No head decides it alone. The head that looks at the cue hardest, layer "
    "{cue_layer} head {cue_head} (weight {cue_wf:.2f} on 吃了 and {cue_wc:.2f} on 投资了, from the comma), "
    "moves the prediction {cue_sf} and {cue_sc} of the way; the largest move of a single head is layer {bh_layer} "
    "head {bh_head}'s, {bh_sf} and {bh_sc} (TV {bh_tf:.3f} and {bh_tc:.3f}).",
    "patch_one_head_decides": "One head carries it: layer {bh_layer} head {bh_head} alone moves the prediction "
    "{bh_sf} and {bh_sc} of the way (TV {bh_tf:.3f} and {bh_tc:.3f}); the head that looks at the cue hardest, "
    "layer {cue_layer} head {cue_head} (weight {cue_wf:.2f} on 吃了 and {cue_wc:.2f} on 投资了, from the "
    "comma), moves it {cue_sf} and {cue_sc}.",
    "patch_layer_switches": "But patch all heads of layer {bl_layer} at once and the prediction changes "
    "sense: {bl_sf} and {bl_sc} of the way (TV {bl_tf:.3f} and {bl_tc:.3f}), while its heads' single moves "
    "add up to {sum_f} and {sum_c}. The sense sits in what these heads write together: swap one, and the "
    "others still write the old sense.",
    "patch_layer_weak": "Even all heads of layer {bl_layer} patched at once move it only {bl_sf} "
    "and {bl_sc} (TV {bl_tf:.3f} and {bl_tc:.3f}): the sense does not sit in the heads of any one layer.",
    "patch_rest_small": "Patching the heads of any other layer, all at once, moves it at most {rest}: "
    "theirs do not carry the sense.",
    "patch_rest_large": "Patching the heads of another layer, all at once, moves it up to {rest} too.",
    "headline_patch": "; layer {bl_layer}'s heads patched in: {bl_sf} / {bl_sc} of the way to the other sense",
    "col_head": "head {head}",
    "patch_x_head": "head",
    "patch_y_layer": "layer",
    "patch_map_title": "running “{run}”:\none head at a time",
    "patch_share": "Patching: the share of the way the prediction moves toward the other sense",
    "patch_layer_title": "all heads of one layer at once",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": (
        "it compares the next words the model predicts, and an encoder has no "
        "next-token head; real-apple is this lesson on an encoder"
    ),
}
