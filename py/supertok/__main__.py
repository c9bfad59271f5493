"""python -m supertok: the command line (supertok/cli.py; `python -m supertok --help`).

    python -m supertok encode [FILE|-] [--encoding o200k_base | --model MODEL] [--allowed-special LIST] [--lines]
    python -m supertok count [FILE|-] ...          (the number of tokens)
    python -m supertok decode [FILE|-] [--encoding ... | --model ...] [--lines]
    python -m supertok pretokenize [FILE|-] [--pattern o200k] [--script-aware [--scripts Han,Thai]] [--lines]
    python -m supertok train FILES... --vocab-size N [--mode paper|hf] [--alphabet bytes|ube] ... -o MODEL
    python -m supertok info                        (backend, versions, where the files are)
    python -m supertok --version
"""
import sys

from supertok.cli import main

if __name__ == "__main__":
    sys.exit(main())
