"""A griffe extension for the API reference (docs/api.md): the doctest examples of a
docstring (a `>>>` line and the lines up to the next blank one) become fenced `pycon`
blocks, which Markdown would otherwise read as quotes nested three deep."""

import griffe


def fence(text: str) -> str:
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if not inside and line.lstrip().startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence(obj.docstring.value)
