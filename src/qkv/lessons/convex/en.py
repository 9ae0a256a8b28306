"""Lesson "convex": one head's z in the hull of its values, and the residual that takes it out (English)."""

MESSAGES = {
    "title": "One head's z lies in the convex hull of its values; the residual takes it out",
    "inside": "inside",
    "outside": "outside",
    "where": "{side} (distance {d})",
    "headline": "example: a = {a}, z = {z}, {ex_at}; layer {layer} head {head}, z of “{tok}”: {z_at}; "
    "z·W_O: {zW_at}; x + z·W_O: {x_at}; x + attn_out: {mid_at}",
    "text": "An attention head adds up the values of the positions it sees, weighted: z = Σ a_j v_j. The softmax "
    "weights are never negative and add up to exactly 1, so z is a weighted average of the values and cannot "
    "leave the region they enclose, their convex hull.\n\n"
    "The small worked example first: the scaled scores are s = {s}, softmax turns them into "
    "a = {a}, and z = {z}. A linear program says: {ex_side} the triangle of the three "
    "values (distance {ex_d}).\n\n"
    "Now the trained model. In “{text}” the last token “{tok}” gets these weights from layer {layer}, head {head}: "
    "{w} (this head gives “{cue}” {cue_weight:.3f}, more than any other head does). Its z has "
    "{d_head} coordinates; the linear program says: {z_side}, distance {z_d}.\n\n"
    "Multiplied by W_O[h], z moves into the {d_model}-dimensional residual space, and it is still the same "
    "convex combination of the points v_j·W_O[h]: a linear map keeps the weights, so it is "
    "{zW_side} (distance {zW_d}).\n\n"
    "The residual connection then adds the old x (|x| = {norm_x:.3f}, while |z·W_O| = {norm_zW:.3f}). "
    "x + z·W_O is at L1 distance {x_d} from that hull (Euclidean "
    "{residual_l2_distance:.3f}): {x_side}. The full update x + attn_out, all heads and "
    "the bias included, is {mid_side} too (distance {mid_d}). "
    "The hull guarantee belongs to one head's normalised mix, and to nothing after it.",
    "head_title": "Layer {layer}, head {head}: z of “{tok}” in the hull of the values",
    "fig_hull": "hull of v_j·W_O[h]",
    "fig_zW": "z·W_O[h] (inside)",
    "fig_x_new": "x + z·W_O[h] (outside)",
    "fig_x": "x (the residual stream)",
    "fig_plane": "a plane that separates them",
    "fig_x_axis": "direction from the nearest hull point to x + z·W_O",
    "fig_y_axis": "main direction of the values (orthogonal)",
    "fig_title": "After the residual the point leaves the hull",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": (
        "its sentence, query and cue word are chosen for the bundled word-level GPT, and its "
        "residual step is a pre-norm block's; real-hull is this lesson on an encoder"
    ),
}
