"""A third-party OpenAI-compatible server for the LLM load harness's tests: ``transformers serve``
(FastAPI, continuous batching, CPU) on a tiny random-weight Llama built here - nothing downloaded.

``python tests/transformers_server.py MODEL_DIR --port N`` builds the model and its tokenizer into
MODEL_DIR (a byte-level BPE of 400 tokens trained on a few English words with the ``tokenizers``
library, a chat template, a 2-layer ``LlamaConfig`` seeded with 0), then runs ``transformers serve
MODEL_DIR --host 127.0.0.1 --port N --device cpu --continuous-batching`` in the same process (torch
is imported once). Needs requirements-test-server.txt (``make setup-test``).
"""

import os
import sys

WORDS = ("the a of to and in is it you that he was for on are with as I his they be at one have this from or had by "
         "word but what some we can out other were all there when up use your how said an each she which do their time "
         "if will way about many then them write would like so these her long make thing see him two has look more day "
         "could go come did number sound no most people my over know water than call first who may down side been now "
         "find Request Hello").split()
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")


def build_tiny_llama(directory):
    """A 2-layer Llama of random weights (seed 0) and a 400-token byte-level BPE tokenizer, saved in ``directory``."""
    import torch  # pylint: disable=import-outside-toplevel
    # pylint: disable=import-outside-toplevel
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "</s>", "<pad>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator([" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                         bos_token_id=0, eos_token_id=1, pad_token_id=2)
    LlamaForCausalLM(config).save_pretrained(directory)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    directory, port = argv[0], argv[argv.index("--port") + 1]
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", CUDA_VISIBLE_DEVICES="")
    build_tiny_llama(directory)
    from transformers.cli.transformers import main as transformers_main  # pylint: disable=import-outside-toplevel

    sys.argv = ["transformers", "serve", directory, "--host", "127.0.0.1", "--port", port, "--device", "cpu",
                "--continuous-batching", "--log-level", "warning",
                # a small paged KV cache: sized from the machine's memory, its allocation took 30 s on the first request
                "--cb-num-blocks", "64", "--cb-block-size", "32", "--cb-max-batch-tokens", "512"]
    return transformers_main()


if __name__ == "__main__":
    sys.exit(main())
