// Generated from Themes/*.toml by .ci/builtin-themes.py: copies compiled into the binary so it
// always starts. A test checks they equal the files.

/// The repository's `Themes/*.toml`, compiled in.
public enum BuiltinThemes {
    public static let sources: [String: String] = [
        "colorblind": #"""
# Colour-blind safe (Okabe–Ito palette): no meaning rests on red versus green; errors and
# conflicts also differ by attribute, and every state keeps its own glyph.
schema = 1
name = "colorblind"
variant = "dark"
inherits = "default"

[palette]
orange = { rgb = "#e69f00", c256 = 214, c16 = 3 }
sky = { rgb = "#56b4e9", c256 = 74, c16 = 6 }
bluegreen = { rgb = "#009e73", c256 = 36, c16 = 6 }
yellow = { rgb = "#f0e442", c256 = 227, c16 = 11 }
blue = { rgb = "#0072b2", c256 = 25, c16 = 4 }
vermillion = { rgb = "#d55e00", c256 = 166, c16 = 1 }
purple = { rgb = "#cc79a7", c256 = 175, c16 = 5 }

[styles]
"ui.header" = { fg = "black", bg = "sky", mono = ["reverse"] }
"ui.header.offline" = { fg = "black", bg = "orange", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.tab.active" = { fg = "sky", bg = "black", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.selection" = { fg = "black", bg = "sky", mono = ["reverse"] }
"ui.flash.info" = { fg = "sky", attrs = ["bold"], mono = ["bold"] }
"ui.flash.warn" = { fg = "yellow", attrs = ["bold"], mono = ["bold"] }
"ui.flash.error" = { fg = "vermillion", attrs = ["bold", "underline"], mono = ["bold", "underline"] }
"status.synced" = { fg = "blue", attrs = ["bold"] }
"status.cloud" = { fg = "sky" }
"status.downloading" = { fg = "bluegreen", attrs = ["bold"], mono = ["bold"] }
"status.uploading" = { fg = "purple", attrs = ["bold"], mono = ["bold"] }
"status.conflict" = { fg = "orange", attrs = ["bold", "reverse"], mono = ["bold", "reverse"] }
"status.error" = { fg = "vermillion", attrs = ["bold", "underline"], mono = ["bold", "underline"] }
"progress.done" = { fg = "sky", mono = ["bold"] }
"diff.add" = { fg = "blue", attrs = ["bold"] }
"diff.del" = { fg = "vermillion", attrs = ["underline"] }
"diff.change" = { fg = "orange" }
"kv.remote" = { fg = "black", bg = "yellow", mono = ["bold", "underline"] }
"kv.invalid" = { fg = "vermillion", attrs = ["bold", "underline"], mono = ["underline"] }
"""#,
        "dark": #"""
# A dark background of its own (true colour where the terminal has it, nearest 256/16 otherwise).
schema = 1
name = "dark"
variant = "dark"
inherits = "default"

[palette]
base = { rgb = "#1e1e2e", c256 = 235, c16 = 0 }
surface = { rgb = "#313244", c256 = 237, c16 = 8 }
text = { rgb = "#cdd6f4", c256 = 189, c16 = 7 }
subtle = { rgb = "#7f849c", c256 = 245, c16 = 8 }
blue = { rgb = "#89b4fa", c256 = 111, c16 = 12 }
green = { rgb = "#a6e3a1", c256 = 151, c16 = 10 }
yellow = { rgb = "#f9e2af", c256 = 223, c16 = 11 }
red = { rgb = "#f38ba8", c256 = 211, c16 = 9 }
mauve = { rgb = "#cba6f7", c256 = 183, c16 = 13 }

[styles]
"ui.text" = { fg = "text", bg = "base" }
"ui.border" = { fg = "surface" }
"ui.border.focus" = { fg = "blue", attrs = ["bold"] }
"ui.header" = { fg = "base", bg = "blue", mono = ["reverse"] }
"ui.header.offline" = { fg = "base", bg = "yellow", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.tab.active" = { fg = "blue", bg = "base", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.selection" = { fg = "base", bg = "mauve", mono = ["reverse"] }
"ui.hint.key" = { fg = "blue", attrs = ["bold"], mono = ["bold"] }
"ui.hint.text" = { fg = "subtle" }
"status.synced" = { fg = "green" }
"status.cloud" = { fg = "blue" }
"status.queued" = { fg = "subtle" }
"status.downloading" = { fg = "blue", attrs = ["bold"], mono = ["bold"] }
"status.uploading" = { fg = "mauve", attrs = ["bold"], mono = ["bold"] }
"status.conflict" = { fg = "yellow", attrs = ["bold"], mono = ["bold", "reverse"] }
"status.error" = { fg = "red", attrs = ["bold"], mono = ["bold", "underline"] }
"progress.done" = { fg = "blue", mono = ["bold"] }
"progress.todo" = { fg = "surface", mono = ["dim"] }
"kv.remote" = { fg = "base", bg = "yellow", mono = ["bold", "underline"] }
"""#,
        "default": #"""
# Ubiquity's default theme: the terminal's own background, ANSI colours (works on 8, 16, 256
# and true-colour terminals), and attributes that keep every meaning without colour (NO_COLOR).
schema = 1
name = "default"
variant = "dark"

[styles]
"ui.text" = { fg = "default", bg = "default" }
"ui.border" = { fg = "bright-black" }
"ui.border.focus" = { fg = "cyan", attrs = ["bold"], mono = ["bold"] }
"ui.title" = { attrs = ["bold"], mono = ["bold"] }
"ui.header" = { fg = "black", bg = "cyan", mono = ["reverse"] }
"ui.header.offline" = { fg = "black", bg = "yellow", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.tab.active" = { fg = "cyan", bg = "black", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.selection" = { fg = "black", bg = "cyan", mono = ["reverse"] }
"ui.marked" = { fg = "yellow", attrs = ["bold"], mono = ["bold"] }
"ui.hint.key" = { fg = "cyan", attrs = ["bold"], mono = ["bold"] }
"ui.hint.text" = { fg = "default" }
"ui.flash.info" = { fg = "green", attrs = ["bold"], mono = ["bold"] }
"ui.flash.warn" = { fg = "yellow", attrs = ["bold"], mono = ["bold"] }
"ui.flash.error" = { fg = "red", attrs = ["bold"], mono = ["bold", "underline"] }
"status.synced" = { fg = "green" }
"status.cloud" = { fg = "blue", attrs = ["bold"] }
"status.queued" = { fg = "bright-black" }
"status.downloading" = { fg = "cyan", attrs = ["bold"], mono = ["bold"] }
"status.uploading" = { fg = "magenta", attrs = ["bold"], mono = ["bold"] }
"status.paused" = { fg = "yellow" }
"status.conflict" = { fg = "yellow", attrs = ["bold"], mono = ["bold", "reverse"] }
"status.error" = { fg = "red", attrs = ["bold"], mono = ["bold", "underline"] }
"progress.done" = { fg = "cyan", mono = ["bold"] }
"progress.todo" = { fg = "bright-black", mono = ["dim"] }
"conflict.local" = { fg = "blue", attrs = ["bold"], mono = ["bold"] }
"conflict.remote" = { fg = "magenta", attrs = ["bold"], mono = ["underline"] }
"diff.add" = { fg = "green", mono = ["bold"] }
"diff.del" = { fg = "red", mono = ["dim"] }
"diff.change" = { fg = "yellow" }
"kv.key" = { attrs = ["bold"], mono = ["bold"] }
"kv.value" = { fg = "default" }
"kv.modified" = { fg = "yellow" }
"kv.remote" = { fg = "black", bg = "yellow", mono = ["bold", "underline"] }
"kv.invalid" = { fg = "red", attrs = ["bold"], mono = ["underline"] }
"kv.readonly" = { fg = "bright-black", mono = ["dim"] }

[glyphs]
"status.synced" = { utf8 = "✓", ascii = "=" }
"status.cloud" = { utf8 = "☁", ascii = "o" }
"status.queued" = { utf8 = "…", ascii = "." }
"status.downloading" = { utf8 = "↓", ascii = "v" }
"status.uploading" = { utf8 = "↑", ascii = "^" }
"status.paused" = { utf8 = "‖", ascii = "p" }
"status.conflict" = { utf8 = "⚠", ascii = "!" }
"status.error" = { utf8 = "✗", ascii = "x" }
"ui.pinned" = { utf8 = "●", ascii = "*" }
"ui.folder" = { utf8 = "▸", ascii = ">" }
"progress.done" = { utf8 = "█", ascii = "#" }
"progress.todo" = { utf8 = "░", ascii = "-" }
"""#,
        "light": #"""
# For terminals with a light background: darker foregrounds, blue selection.
schema = 1
name = "light"
variant = "light"
inherits = "default"

[palette]
ink = "#1f2328"
muted = { rgb = "#6e7781", c256 = 243, c16 = 8 }
accent = { rgb = "#0969da", c256 = 26, c16 = 4 }
good = { rgb = "#1a7f37", c256 = 28, c16 = 2 }
warn = { rgb = "#9a6700", c256 = 136, c16 = 3 }
bad = { rgb = "#cf222e", c256 = 160, c16 = 1 }

[styles]
"ui.text" = { fg = "ink", bg = "default" }
"ui.border" = { fg = "muted" }
"ui.border.focus" = { fg = "accent", attrs = ["bold"] }
"ui.header" = { fg = "white", bg = "accent", mono = ["reverse"] }
"ui.header.offline" = { fg = "white", bg = "warn", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.tab.active" = { fg = "accent", bg = "white", attrs = ["bold"], mono = ["bold", "underline"] }
"ui.selection" = { fg = "white", bg = "accent", mono = ["reverse"] }
"ui.hint.key" = { fg = "accent", attrs = ["bold"], mono = ["bold"] }
"status.synced" = { fg = "good" }
"status.cloud" = { fg = "accent" }
"status.queued" = { fg = "muted" }
"status.downloading" = { fg = "accent", attrs = ["bold"], mono = ["bold"] }
"status.conflict" = { fg = "warn", attrs = ["bold"], mono = ["bold", "reverse"] }
"status.error" = { fg = "bad", attrs = ["bold"], mono = ["bold", "underline"] }
"progress.done" = { fg = "accent", mono = ["bold"] }
"progress.todo" = { fg = "muted", mono = ["dim"] }
"kv.remote" = { fg = "ink", bg = { rgb = "#fff8c5", c256 = 230, c16 = 11 }, mono = ["bold", "underline"] }
"""#,
        "mono": #"""
# No colour at all: every role is drawn with attributes only (what NO_COLOR selects).
schema = 1
name = "mono"
variant = "dark"
inherits = "default"
monochrome = true
"""#,
    ]
}
