"""Lesson "align": cross-attention as word alignment, on a zh→en translation model (English)."""

MESSAGES = {
    "title": "Cross-attention aligns words: which Chinese word the decoder reads while it writes each English word",
    "layer_acc": "layer {layer} {acc:.3f}",
    "kind_acc": "{kind} {best:.3f} against {diagonal:.3f} ({n} words)",
    "kind_sense": "word sense",
    "kind_order": "who did what to whom",
    "kind_drug": "drug and effect",
    "kind_job": "job and workplace",
    "link_single": "one Chinese counterpart",
    "link_phrase": "a phrase of several",
    "link_punct": "punctuation",
    "single_beats": "Where an English word has exactly one Chinese counterpart, the best head finds it "
    "{single_best:.3f} of the time against the diagonal's {single_diagonal:.3f}: there it aligns by "
    "content, not by place.",
    "single_not": "Even where an English word has exactly one Chinese counterpart, the best head finds it only "
    "{single_best:.3f} of the time, against the diagonal's {single_diagonal:.3f}.",
    "phrase_diagonal": "The diagonal does better inside phrases ({phrase_diagonal:.3f} against "
    "{phrase_best:.3f}): every word of a long block counts there, so landing near the right place is enough.",
    "comma_ahead": "The row that writes a comma misses the Chinese comma {comma_missed} times out of {commas}, and "
    "{comma_ahead} of those misses lie further right in the source, on what follows the comma: the "
    "decoder is already reading what it will write next.",
    "comma_elsewhere": "The row that writes a comma misses the Chinese comma {comma_missed} times out of "
    "{commas}; only {comma_ahead} of those misses lie further right in the source.",
    "sense_food": "food",
    "sense_company": "company",
    "sense_cell": "{sense} ({en}): word {word_ok}/{n}, tail {tail_ok}/{n}, whole sentence {exact}/{n}",
    "sense_line": "- {word}: {cells}",
    "far_above": "The best head is far above the untrained model ({best_acc:.3f} against {untrained_best_acc:.3f}): "
    "the alignment was learned; the attention formula by itself gives none.",
    "not_far_above": "The best head is not far above the untrained model ({best_acc:.3f} against "
    "{untrained_best_acc:.3f}).",
    "beats_diagonal": "It also beats the diagonal ({diagonal:.3f}), so it follows the words, not merely their places.",
    "not_beats_diagonal": "Over all words, though, it does not beat the diagonal ({diagonal:.3f}), which reads no "
    "attention at all; the kinds of link below show where it loses.",
    "mean_below": "All heads averaged give {acc_mean:.3f}, less than the best head: not every head aligns, some read "
    "other things.",
    "mean_not_below": "All heads averaged give {acc_mean:.3f}, about as much as the best head: averaging does not wash "
    "the alignment out.",
    "reads_lower": "Scored on the row one position later instead (the one whose input is w_j, the row that has just "
    "read the word rather than the one writing it), the best head reaches {reads_best_acc:.3f} "
    "(layer {reads_layer}, head {reads_head}): the alignment sits in the row that writes the word.",
    "reads_higher": "Scored on the row one position later instead (the one whose input is w_j), the best head reaches "
    "{reads_best_acc:.3f} (layer {reads_layer}, head {reads_head}), more than the writing row: this "
    "model looks up a word's source after it has written it.",
    "swap_cue": "the English word follows the cue verb in {swap_cue} of {swap_n} sentences (the tail in {swap_tail}, "
    "neither in {swap_neither}): the verb decides.",
    "swap_tail": "the English word follows the tail in {swap_tail} of {swap_n} sentences (the cue verb in {swap_cue}, "
    "neither in {swap_neither}): the tail decides, not the verb.",
    "swap_mixed": "the English word follows the cue verb in {swap_cue} of {swap_n} sentences, the tail in {swap_tail} "
    "and neither in {swap_neither}: neither clue decides alone.",
    "tail_faithful": "The tail itself comes out as written in {swap_faithful} of {swap_n} (a tail of the "
    "verb's sense in {swap_verb_tail}), for example “{swap_zh}” → “{swap_en}”.",
    "tail_unfaithful": "The tail itself comes out as written in only {swap_faithful} of {swap_n}: in "
    "{swap_verb_tail} the decoder writes a tail of the verb's sense instead, as in “{swap_zh}” → “{swap_en}”. Past the "
    "ambiguous word it follows its own English more than the Chinese it reads; a translation model "
    "is also a language model of the target.",
    "tail_mixed": "The tail comes out as written in only {swap_faithful} of {swap_n}, and as a tail of "
    "the verb's sense in {swap_verb_tail}; the rest are neither, as in “{swap_zh}” → “{swap_en}”.",
    "rows": "Teacher-forced on the reference, the rows that write {millet} put, averaged over all heads, "
    "{food_word_w:.3f} of their weight on {split_word} itself, {food_cue_w:.3f} on the cue verb and {food_tail_w:.3f} "
    "on the tail; for {xiaomi} it is {company_word_w:.3f}, {company_cue_w:.3f} and {company_tail_w:.3f}. The head "
    "that looks hardest at the verb gives it {food_cue_head:.3f} and {company_cue_head:.3f}.",
    "rows_cue_least": "So the verb that decides gets the least of the three: cross-attention need not read it again, "
    "because the decoder's own prefix already holds the English verb it wrote a step earlier, and its "
    "self-attention can read it there.",
    "rows_cue_most": "The verb that decides gets the most of the three: cross-attention reads the clue that "
    "settles the sense.",
    "rows_cue_between": "The verb that decides gets neither the most nor the least of the three; the "
    "decoder's own prefix, which already holds the English verb, is a second way for the clue to arrive.",
    "text": "A translation model's decoder has a second attention in every block, cross-attention. Its "
    "queries come from the English it is writing, its keys and values from the encoder's vectors of the Chinese "
    "sentence, so each row of its pattern tells which Chinese words the decoder reads while it writes one "
    "English word. qkv's corpus built both sentences from one phrase table, so it knows which words translate "
    "which, and the rows can be scored.\n\n"
    "The model has {n_layers} decoder layers of {n_heads} cross-attention heads (d_model = {d_model}). It reads "
    "{n_pairs} held-out pairs (frames it was never trained on) with the reference English fed in (teacher "
    "forcing). The row at target position j writes the English word w_j; its input is the word before (or <s> "
    "at the start). For each of the {n_words} English words with a gold link, the Chinese word that gets the "
    "most weight in that row is the head's guess, right when the corpus links the two words.\n"
    "- best head: layer {layer}, head {head}: {best_acc:.3f}\n"
    "- each layer's heads averaged into one pattern: {layers}\n"
    "- all heads averaged: {acc_mean:.3f}\n"
    "- the same model untrained (fresh seeded weights): best head {untrained_best_acc:.3f}, all heads averaged "
    "{untrained_mean:.3f}\n"
    "- no attention at all: the Chinese word at the same relative place (the diagonal) {diagonal:.3f}, a random "
    "Chinese word {chance:.3f}\n\n"
    "{verdict}\n\n"
    "By kind of link (best head against the diagonal): {links}. Inside a phrase every Chinese word is linked to "
    "every English word of it, so a row that lands anywhere in the right phrase counts. {link_verdict} By kind "
    "of sentence: {kinds}.\n\n"
    "Translated greedily, the {n_pairs} held-out Chinese sentences reach a corpus BLEU of {bleu_greedy:.1f} "
    "(sacrebleu, on the corpus's words); {exact_greedy:.1%} are the reference word for word. Beam search (a "
    "beam of {beam}) decodes one sentence at a time, so it runs on every {beam_every}th sentence only "
    "({n_beam} of them): BLEU {bleu_beam:.1f} against greedy's {bleu_greedy_some:.1f} on the same sentences "
    "({exact_beam:.1%} against {exact_greedy_some:.1%} word for word).\n\n"
    "The ambiguous words in the held-out sense sentences (word: the sense's English word; tail: the clause after "
    "the comma as in the reference):\n{senses}\n\n"
    "{split_word} is a single word in Chinese; in English it is {millet} as food and {xiaomi} as a company, so "
    "only the context can tell. Swapping the tails of the {swap_n} {split_word} sentences (a food verb with a "
    "company tail, and the other way round) pulls the two clues apart: {split_verdict}",
    "headline": "alignment: best head L{layer}H{head} {best_acc:.3f}, all heads averaged {acc_mean:.3f}, untrained "
    "{untrained_best_acc:.3f}, diagonal {diagonal:.3f}; BLEU {bleu_greedy:.1f} greedy ({n_pairs} "
    "sentences), {bleu_beam:.1f} beam {beam} ({n_beam}); {split_word}: {millet} {millet_ok}/{millet_n}, "
    "{xiaomi} {xiaomi_ok}/{xiaomi_n}",
    "fig_pick": "largest weight of the row",
    "fig_source": "Chinese word read (source)",
    "fig_target": "English word being written (target)",
    "fig_head": "layer {layer} head {head} (the best)",
    "fig_mean": "all heads averaged",
    "fig_matrix_title": "Cross-attention over a held-out pair; boxes are the gold links",
    "fig_trained": "trained",
    "fig_untrained": "untrained",
    "fig_mean_line": "all heads averaged {acc:.3f}",
    "fig_diagonal": "diagonal {acc:.3f}",
    "fig_chance": "chance {acc:.3f}",
    "fig_acc": "alignment accuracy",
    "fig_heads_title": "Alignment accuracy of each cross-attention head ({n_words} words, {n_pairs} held-out pairs)",
    "fig_cue_head": "layer {layer} head {head} (most on the verb)",
    "fig_split_panel": "writing “{written}” after “{prefix}”",
    "fig_weight": "cross-attention weight",
    "fig_split_title": "What the decoder reads as it writes the English of {word}",
}
