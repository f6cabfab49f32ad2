// The text layer: tokenizer, chat template, output parsing (being written).
