"""The plug-in tag (:mod:`search.evaluation.plugin_tag`): issue 43 asked that a term plug-in's
kernels be cached across starts where numba allows it (an engine with a plug-in compiled again
at every start, 7.5 to 10 s to its first move). The tag's numba type is keyed by the plug-in's
name and file digest, so a kernel compiled for it is found again by the next process."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import typeof

from search.evaluation.plugin_tag import EVALUATORS, PluginTag, PluginTagType, plugin_key

ROOT = Path(__file__).resolve().parents[3]


def test_the_key_follows_the_file_and_the_layout(tmp_path: Path) -> None:
    f = tmp_path / "t.py"
    f.write_text("A = 1\n")
    k = plugin_key("t", f, 100, 1)
    assert k == plugin_key("t", f, 100, 1) and k[0] == "t" and len(k[1]) == 16
    assert plugin_key("t", f, 100, 2) != k  # another place in the catalogue
    f.write_text("A = 2\n")
    assert plugin_key("t", f, 100, 1) != k  # another file
    copy = tmp_path / "elsewhere" / "t.py"
    copy.parent.mkdir()
    copy.write_text("A = 2\n")
    assert plugin_key("t", copy, 100, 1) != plugin_key("t", f, 100, 1)  # a copy is another module


def test_the_tags_type_is_its_key_and_survives_pickling() -> None:
    """numba's cache index stores the signature (pickled) and compares it by type equality."""
    a, b = typeof(PluginTag(("x", "0123"))), typeof(PluginTag(("x", "0123")))
    assert isinstance(a, PluginTagType) and a == b and hash(a) == hash(b)
    assert a != typeof(PluginTag(("x", "4567")))
    assert pickle.loads(pickle.dumps(a)) == a


def test_the_tag_called_from_python_is_the_plugins_evaluate() -> None:
    """The Python bodies (``NUMBA_DISABLE_JIT=1``) call the tag as the evaluate function."""
    key = ("test-python-call", "feedfacefeedface")
    EVALUATORS[key] = lambda b, w, scratch: int(b[0] + 2 * w[0])
    try:
        assert PluginTag(key)(np.array([3]), np.array([5]), np.zeros(2)) == 13
    finally:
        del EVALUATORS[key]


_TOY_MODULE = textwrap.dedent('''
    import numpy as np
    from numba import njit
    from search.evaluation.static_eval import static_score

    @njit
    def toy_evaluate(b, w, scratch):
        return b[0] * 3 + w[1]

    @njit(cache=True)
    def score_twice(ev, b, scratch):
        return static_score(ev, None, 0, b, scratch) + static_score(ev, None, 1, b, scratch)
''')

_RUN = textwrap.dedent('''
    import json, sys
    import numpy as np
    from numba.core.event import install_recorder
    from search.evaluation.plugin_tag import EVALUATORS, PluginTag
    import toy_terms
    key = ("toy", "00000000000000aa")
    EVALUATORS[key] = toy_terms.toy_evaluate
    with install_recorder("numba:compile") as rec:
        v = toy_terms.score_twice((np.array([0, 7], dtype=np.int32), PluginTag(key)),
                                  np.array([5], dtype=np.uint64), np.zeros(2, dtype=np.int64))
    print(json.dumps({"value": int(v), "compiled": len(rec.buffer)}))
''')


def _run_twice(script: str, env: dict[str, str], cwd: Path, timeout: int) -> list[dict[str, object]]:
    """Run ``script`` in two Python processes one after the other; the JSON line each printed."""
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=timeout)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return runs


def test_a_kernel_compiled_for_a_tag_is_loaded_from_the_cache_by_the_next_process(tmp_path: Path) -> None:
    """A cached kernel taking ``(w, tag)`` compiles in the first process and is loaded, not
    compiled, by the second (a function passed in the tag's place would compile in each)."""
    (tmp_path / "toy_terms.py").write_text(_TOY_MODULE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
           "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_DISABLE_JIT", None)
    runs = _run_twice(_RUN, env, tmp_path, 600)
    assert [r["value"] for r in runs] == [2 * (5 * 3 + 7)] * 2
    assert runs[0]["compiled"] > 0 and runs[1]["compiled"] == 0, runs


@pytest.mark.slow
def test_the_example_plugins_search_is_loaded_from_the_cache_by_the_next_process() -> None:
    """The real thing: the iterative search with ``docs/examples/rook_behind_passer.py`` in two
    processes one after the other, the second compiling nothing (the first compiles only if
    no earlier run cached it) and finding the same move."""
    script = textwrap.dedent('''
        import json
        from numba.core.event import install_recorder
        from search.core.convert import from_fen
        from search.params.weights import load_weights
        from search.tree.iterative import Searcher
        w = load_weights("classic").values
        with install_recorder("numba:compile") as rec:
            it = Searcher(w, tt_bits=16).think(
                from_fen("r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9"), [], max_depth=4)
        print(json.dumps({"pv": list(it.pv), "score": it.score, "compiled": len(rec.buffer)}))
    ''')
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "MOVETUNER_TERMS": str(ROOT / "docs" / "examples" / "rook_behind_passer.py")}
    runs = _run_twice(script, env, ROOT, 3000)
    assert runs[1]["compiled"] == 0, runs
    assert runs[0]["pv"] == runs[1]["pv"] and runs[0]["score"] == runs[1]["score"]
