"""Weights written for other engines: JSON, C and Rust tables and a text view
(:mod:`.formats`), packed ``S(mg, eg)`` C tables (:mod:`.packed`), a network's C header and
evaluator (:mod:`.network_c`, ``c/mtnn_eval.h``), and the lines every C header opens with
(:mod:`.c_lines`)."""
