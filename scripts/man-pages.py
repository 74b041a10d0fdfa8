#!/usr/bin/env python3
"""Writes the command line's man pages from its own help: cdmigrate.1 and one cdmigrate-COMMAND.1
per command, from the description argument-parser gives (`cdmigrate --experimental-dump-help`):
the abstract, the discussion (examples, exit codes) and every argument, option and flag.

    scripts/man-pages.py CDMIGRATE OUTPUT_DIR VERSION
"""

import datetime
import json
import os
import subprocess
import sys


def escape(text: str) -> str:
    """Text as roff reads it: backslashes escaped, characters past ASCII as \\[uXXXX] (groff and
    mandoc read them without a preprocessor), no line starting with a control character."""
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text.replace("\\", "\\e"))
    lines = text.splitlines()
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in lines)


def paragraphs(text: str) -> str:
    """The discussion: blank lines become paragraphs, indented lines (examples) stay as they are."""
    out = []
    for block in text.strip().split("\n\n"):
        if any(line.startswith("  ") for line in block.splitlines()):
            out.append(".PP\n.nf\n" + escape(block) + "\n.fi")
        else:
            out.append(".PP\n" + escape(block))
    return "\n".join(out)


def synopsis_of(argument: dict) -> str:
    if argument["kind"] == "positional":
        text = f"\\fI{argument['valueName']}\\fR"
    else:
        name = argument["preferredName"]
        text = ("-" if name["kind"] == "short" else "--") + name["name"]
        text = f"\\fB{text}\\fR" + ("" if argument["kind"] == "flag" else f" \\fI{argument['valueName']}\\fR")
    if argument.get("isRepeating"):
        text += " ..."
    return f"[{text}]" if argument.get("isOptional") else text


def page(command: dict, path: list, version: str) -> str:
    name = "-".join(path)
    date = (
        datetime.date.today().isoformat()
        if not os.environ.get("SOURCE_DATE_EPOCH")
        else datetime.datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]), datetime.timezone.utc)
        .date()
        .isoformat()
    )
    arguments = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    subcommands = [
        c for c in command.get("subcommands", []) if c.get("shouldDisplay", True) and c["commandName"] != "help"
    ]
    out = [
        f'.TH {name.upper()} 1 "{date}" "cdmigrate {version}" "cdmigrate manual"',
        ".SH NAME",
        f"{name} \\- {escape(command.get('abstract', ''))}",
        ".SH SYNOPSIS",
        f"\\fB{' '.join(path)}\\fR "
        + (" ".join(synopsis_of(a) for a in arguments) or ("\\fIcommand\\fR ..." if subcommands else "")),
    ]
    if command.get("discussion"):
        out += [".SH DESCRIPTION", paragraphs(command["discussion"])]
    if arguments:
        out.append(".SH OPTIONS")
        for argument in arguments:
            if argument["kind"] == "positional":
                out += [".TP", f"\\fI{argument['valueName']}\\fR"]
            else:
                names = ", ".join(("-" if n["kind"] == "short" else "--") + n["name"] for n in argument["names"])
                value = "" if argument["kind"] == "flag" else f" \\fI{argument['valueName']}\\fR"
                out += [".TP", f"\\fB{names}\\fR{value}"]
            out.append(
                escape(argument.get("abstract", ""))
                + (" (default: " + escape(argument["defaultValue"]) + ")" if argument.get("defaultValue") else "")
            )
    if subcommands:
        out.append(".SH COMMANDS")
        for sub in subcommands:
            out += [
                ".TP",
                f"\\fB{sub['commandName']}\\fR",
                escape(sub.get("abstract", "")) + f" See \\fB{name}-{sub['commandName']}\\fR(1).",
            ]
    see = [f"\\fB{name}-{s['commandName']}\\fR(1)" for s in subcommands] or [f"\\fB{path[0]}\\fR(1)"]
    out += [".SH SEE ALSO", ", ".join(see)]
    return "\n".join(out) + "\n"


def write(command: dict, path: list, directory: str, version: str) -> list:
    file = os.path.join(directory, "-".join(path) + ".1")
    with open(file, "w") as handle:
        handle.write(page(command, path, version))
    written = [file]
    for sub in command.get("subcommands", []):
        if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
            written += write(sub, [*path, sub["commandName"]], directory, version)
    return written


def main(executable: str, directory: str, version: str) -> None:
    dump = json.loads(
        subprocess.run([executable, "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout
    )
    os.makedirs(directory, exist_ok=True)
    command = dump["command"]
    written = write(command, [command["commandName"]], directory, version)
    print(f"man-pages: {len(written)} pages in {directory}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
