#!/usr/bin/env python3
"""GPT-2's tokens for the course corpus, offline: token shards and llm.c's tokenizer file.

    gpt2_tokens.py BPE_FILE OUT_DIR TRAIN_TXT VAL_TXT

BPE_FILE is GPT-2's byte-pair encoding in tiktoken's format (gpt2.tiktoken, as the
openai-whisper package ships it; scripts/setup_gpt2.sh fetches it); its sha256 must be
the one tiktoken expects of r50k_base, GPT-2's encoding. tiktoken encodes (it is the
encoder OpenAI's own models use, so the ids are GPT-2's); this script only lays out files.

Writes into OUT_DIR, each whole (a temporary file beside it, renamed into place):
  gpt2_train.bin, gpt2_val.bin  token shards in llm.c's format (256 int32 header: magic
                                20240520, version 1, token count; then uint16 tokens).
                                Each line of the text (a paragraph) is a document and, as
                                llm.c's data scripts do, starts with <|endoftext|> (50256).
  gpt2_tokenizer.bin            llm.c's tokenizer file (256 uint32 header: magic 20240328,
                                version 2, vocabulary 50257, end-of-text token 50256; then
                                per token its length as one byte and its bytes).
"""
import os
import struct
import sys

import tiktoken
import tiktoken.load
from tiktoken_ext.openai_public import r50k_pat_str

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from whole_file import write_atomically  # noqa: E402 (the course's scripts are not a package)

R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
END_OF_TEXT = "<|endoftext|>"


def fail(message):
    print(f"gpt2_tokens: {message}", file=sys.stderr)
    sys.exit(1)


def gpt2_encoding(bpe_file):
    try:
        ranks = tiktoken.load.load_tiktoken_bpe(bpe_file, expected_hash=R50K_SHA256)
    except (OSError, ValueError) as error:
        fail(f"{bpe_file}: {error}")
    encoding = tiktoken.Encoding(name="gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                                 special_tokens={END_OF_TEXT: 50256}, explicit_n_vocab=50257)
    if encoding.encode("Hello world") != [15496, 995]:
        fail(f"{bpe_file}: 'Hello world' does not encode to GPT-2's [15496, 995]")
    return encoding


def shard(encoding, text_file):
    eot = encoding.eot_token
    tokens = []
    with open(text_file, encoding="utf-8") as text:
        for paragraph in text:
            tokens.append(eot)
            tokens.extend(encoding.encode_ordinary(paragraph))
    header = struct.pack("<256i", 20240520, 1, len(tokens), *([0] * 253))
    return header + struct.pack(f"<{len(tokens)}H", *tokens), len(tokens)


def tokenizer_file(encoding):
    header = struct.pack("<256I", 20240328, 2, encoding.n_vocab, encoding.eot_token, *([0] * 252))
    body = bytearray()
    for token in range(encoding.n_vocab):
        piece = encoding.decode_single_token_bytes(token)
        if not 0 < len(piece) < 256:
            fail(f"token {token} is {len(piece)} bytes long: llm.c's format holds 1..255")
        body += bytes([len(piece)]) + piece
    return header + bytes(body)


def main():
    if len(sys.argv) != 5 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    bpe_file, out_dir, train_text, val_text = sys.argv[1:]
    if not os.path.isdir(out_dir):
        fail(f"no folder {out_dir}")
    encoding = gpt2_encoding(bpe_file)
    for text_file, name in ((train_text, "gpt2_train.bin"), (val_text, "gpt2_val.bin")):
        data, count = shard(encoding, text_file)
        write_atomically(os.path.join(out_dir, name), data)
        print(f"gpt2_tokens: {text_file}: {count} GPT-2 tokens -> {os.path.join(out_dir, name)}")
    write_atomically(os.path.join(out_dir, "gpt2_tokenizer.bin"), tokenizer_file(encoding))
    print(f"gpt2_tokens: {os.path.join(out_dir, 'gpt2_tokenizer.bin')} ({encoding.n_vocab} tokens)")


if __name__ == "__main__":
    main()
