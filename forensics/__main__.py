"""``python -m forensics``: the ``forensics`` command."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="forensics")
