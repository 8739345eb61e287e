import Foundation
import Testing
import UbiqTesting
@testable import UbiqTUI

/// #24 §3 `config.toml`: every key read, and a broken file is one line naming where.
@Suite("config.toml")
struct UserConfigTests {
    @Test func everyKeyIsReadAndCheckedWithItsLine() throws {
        let c = try UserConfig.parse("""
            # mine
            theme = "dark"
            color = "never"
            ascii = true
            sort = "size"
            show-hidden = true
            download = "on-demand"
            log-level = "debug"
            """, origin: "config.toml")
        #expect(c.theme == "dark" && c.color == "never" && c.ascii == true && c.sort == "size" && c.showHidden == true
                && c.download == "on-demand" && c.logLevel == "debug")
        #expect(try UserConfig.parse("", origin: "c") == UserConfig())
        let cases: [(String, String)] = [
            ("theme = \"dark\"\ncolour = \"never\"\n", "config.toml: line 2: unknown setting 'colour'"),
            ("sort = \"size\"\ncolor = \"sometimes\"\n", "config.toml: line 2: color must be one of auto, always, never, not 'sometimes'"),
            ("ascii = \"true\"\n", "config.toml: line 1: ascii must be true or false (no quotes)"),
            ("theme = 3\n", "config.toml: line 1: theme must be a string"),
            ("theme = \"dark\"\n\nsort = [\n", "config.toml: line 4: expected a value"),
            ("a = [\"bold\", }\n", "config.toml: line 1"),
        ]
        for (text, expected) in cases {
            do { _ = try UserConfig.parse(text, origin: "config.toml"); Issue.record("accepted: \(text)") } catch let e as ConfigError {
                #expect(e.message.hasPrefix(expected) && !e.message.contains("\n"), "\(e.message)")
            }
        }
    }

    /// Damaged files (bytes flipped, dropped, inserted) are refused with a `ConfigError` or
    /// read, never a trap (the TOML library aborts on some input; the preflight comes first).
    @Test func damagedConfigFilesNeverCrash() throws {
        var rng = SeededRandom.forTest("fuzz.config")
        let good = Array("theme = \"dark\"\ncolor = \"auto\"\nascii = false\nsort = \"name\"\nshow-hidden = true\n".utf8)
        let bytes: [UInt8] = Array("[]{}=\"'#,\n .-_0aZ\\\u{1}".utf8)
        var refused = 0
        for _ in 0..<FuzzCases.count(500) {
            let b = rng.mutate(good, edits: 1...4, alphabet: bytes)
            do { _ = try UserConfig.parse(String(decoding: b, as: UTF8.self), origin: "c") } catch is ConfigError { refused += 1 }
        }
        #expect(refused > 0)
    }

    @Test func theFileIsFoundTheXDGWay() {
        #expect(UserConfig.path(environment: ["XDG_CONFIG_HOME": "/x/conf", "HOME": "/h"]).path == "/x/conf/ubiquity/config.toml")
        #expect(UserConfig.path(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]).path == "/h/.config/ubiquity/config.toml")
    }
}
