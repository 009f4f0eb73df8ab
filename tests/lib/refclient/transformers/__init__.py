"""Stand-in for the parts of Hugging Face transformers that InferenceX's
benchmark_serving.py imports: AutoTokenizer.from_pretrained(DIR) returns the
server's own tokenizer (servetop_tokenizer.ServerTokenizer). See README."""
from servetop_tokenizer import ServerTokenizer


class PreTrainedTokenizerBase(ServerTokenizer):
    pass


class PreTrainedTokenizer(PreTrainedTokenizerBase):
    pass


class PreTrainedTokenizerFast(PreTrainedTokenizerBase):
    pass


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, *args, **kwargs):
        return PreTrainedTokenizerFast(path)
