"""``python -m forensics.cli``: the ``forensics`` command, as ``python -m forensics`` runs it."""

from . import main

if __name__ == "__main__":
    main()
