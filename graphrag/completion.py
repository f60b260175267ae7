"""Shell completion scripts for the ``graphrag`` command, generated from its argparse parser, so
they follow the commands and options as they change (no extra dependency, nothing runs per keypress).

``graphrag completion bash`` prints a bash script; ``zsh`` prints the same through zsh's
``bashcompinit``. Option values with fixed choices (``--mode``, ``services up|down|status``)
complete; free values and paths fall back to the shell's file completion.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh")


@dataclass
class _Command:
    options: list[str] = field(default_factory=list)
    #: option -> its choices; options that take a value but have no choices map to [].
    values: dict[str, list[str]] = field(default_factory=dict)
    #: choices of the positional arguments (``services up|down|status``).
    positional: list[str] = field(default_factory=list)


def _describe(parser: argparse.ArgumentParser) -> _Command:
    command = _Command()
    for action in parser._actions:  # noqa: SLF001 - argparse offers no public walk of its actions
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            continue
        if action.option_strings:
            command.options += action.option_strings
            if action.nargs != 0:
                for opt in action.option_strings:
                    command.values[opt] = [str(c) for c in action.choices or ()]
        elif action.choices:
            command.positional += [str(c) for c in action.choices]
    return command


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def _words(items: list[str]) -> str:
    return shlex.quote(" ".join(items))


def bash_script(parser: argparse.ArgumentParser) -> str:
    """A bash completion function for ``parser.prog``."""
    prog = parser.prog
    func = "_" + "".join(ch if ch.isalnum() else "_" for ch in prog)
    top = _describe(parser)
    subs = _subcommands(parser)
    cases = []
    for name, sub in subs.items():
        cmd = _describe(sub)
        value_cases = []
        for opt, choices in cmd.values.items():
            reply = f"COMPREPLY=($(compgen -W {_words(choices)} -- \"$cur\"))" if choices else ":"
            value_cases.append(f"                {shlex.quote(opt)}) {reply}; return ;;")
        values = "\n".join(value_cases)
        positional = (f"                COMPREPLY=($(compgen -W {_words(cmd.positional)} -- \"$cur\"))"
                      if cmd.positional else "                :")
        cases.append(f"""        {shlex.quote(name)})
            case "$prev" in
{values or '                "") ;;'}
            esac
            if [[ "$cur" == -* ]]; then
                COMPREPLY=($(compgen -W {_words(cmd.options)} -- "$cur"))
            else
{positional}
            fi
            ;;""")
    return f"""# {prog} completion for bash: eval "$({prog} completion bash)" (e.g. in ~/.bashrc)
{func}() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            -*) ;;
            *) cmd="${{COMP_WORDS[i]}}"; break ;;
        esac
    done
    COMPREPLY=()
    case "$cmd" in
        "")
            COMPREPLY=($(compgen -W {_words(list(subs) + top.options)} -- "$cur"))
            ;;
{chr(10).join(cases)}
    esac
}}
complete -o default -F {func} {prog}
"""


def zsh_script(parser: argparse.ArgumentParser) -> str:
    """The bash function, loaded through zsh's ``bashcompinit``."""
    prog = parser.prog
    body = bash_script(parser).split("\n", 1)[1]
    return (f'# {prog} completion for zsh: eval "$({prog} completion zsh)" (e.g. in ~/.zshrc, after compinit)\n'
            "autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + body)


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of ``parser`` for ``shell`` (one of :data:`SHELLS`)."""
    return bash_script(parser) if shell == "bash" else zsh_script(parser)
