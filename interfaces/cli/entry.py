"""The `memagent` program: `memagent chat` is a client of a running server and starts without the
server's code (a tenth of a second instead of the seconds importing the whole stack takes);
every other command is `interfaces.cli.main`'s."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["chat"]:
        from interfaces.cli.chat.command import add_chat_command, run_chat  # noqa: PLC0415 - the point: nothing else

        parser = argparse.ArgumentParser(prog="memagent")
        add_chat_command(parser.add_subparsers(dest="command", required=True))
        return run_chat(parser.parse_args(arguments))
    from interfaces.cli.main import main as every_command  # noqa: PLC0415 - the server's code, imported only here

    return every_command(argv)


if __name__ == "__main__":
    sys.exit(main())
