"""Lines every C header movetuner writes shares (:mod:`tuner.export.formats`, :mod:`tuner.export.packed`,
:mod:`tuner.export.network_c`), in a module of their own so that the exporters need not import
each other."""

from __future__ import annotations

#: C lines defining ``MT_UNUSED``: GCC's and Clang's ``unused`` attribute (a table the engine
#: does not read draws no ``-Wunused-const-variable`` warning), nothing for other compilers
C_UNUSED_LINES = (
    "/* tables an engine does not read draw no -Wunused-const-variable warning */",
    "#if defined(__GNUC__) || defined(__clang__)",
    "#define MT_UNUSED __attribute__((unused))",
    "#else",
    "#define MT_UNUSED",
    "#endif",
)


def c_prologue(guard: str) -> list[str]:
    """The lines that open every header: the include guard ``guard``, ``<stdint.h>`` and
    ``MT_UNUSED`` (:data:`C_UNUSED_LINES`), each followed by a blank line."""
    return [f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "", *C_UNUSED_LINES, ""]


__all__ = ["C_UNUSED_LINES", "c_prologue"]
