#!/usr/bin/env python3
"""Regenerates Sources/UbiqTUI/Theme/BuiltinThemes.swift from Themes/*.toml (a test checks they match)."""
import os
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
names = sorted(f[:-5] for f in os.listdir(os.path.join(root, "Themes")) if f.endswith(".toml"))
out = ["// Generated from Themes/*.toml by .ci/builtin-themes.py: copies compiled into the binary so it",
       "// always starts. A test checks they equal the files.",
       "",
       "/// The repository's `Themes/*.toml`, compiled in.",
       "public enum BuiltinThemes {",
       "    public static let sources: [String: String] = ["]
for n in names:
    t = open(os.path.join(root, "Themes", n + ".toml"), encoding="utf-8").read()
    assert '"""#' not in t
    out.append(f'        "{n}": #"""\n{t}"""#,')
out += ["    ]", "}"]
open(os.path.join(root, "Sources/UbiqTUI/Theme/BuiltinThemes.swift"), "w", encoding="utf-8").write("\n".join(out) + "\n")
