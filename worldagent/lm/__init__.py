"""The shared language-model layer: bases, tokenizers, devices, LoRA training (SFT included), loading, generation and
the decoding grammar. The world agent and the browser specialists both build on it."""
