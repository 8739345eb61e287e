import Foundation
import Testing
import UbiqCore
import UbiqTesting

/// The predicate language of product §5: every attribute and operator, error positions, and
/// seeded properties (print → parse round trip, boolean laws, hostile input never crashes).
@Suite("Metadata query predicates")
struct PredicateTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func item(_ path: String, size: Int = 100, kind: ItemKind = .file, status: MetadataItem.Status = .current,
                     modified: Date? = now.addingTimeInterval(-3600), conflict: Bool = false) -> MetadataItem {
        var i = MetadataItem(itemID: ItemID(uuid: UUID()), path: try! RelativePath(validating: path), kind: kind, size: size,
                             created: now.addingTimeInterval(-86400 * 30), modified: modified, status: status)
        i.conflict = conflict
        return i
    }

    func matches(_ text: String, _ item: MetadataItem) throws -> Bool {
        try QueryPredicate.parse(text).matches(item, now: Self.now)
    }

    @Test func examplesFromTheContract() throws {
        let txt = Self.item("Documents/Reports/q1.txt", size: 20_000_000)
        let pdf = Self.item("Documents/scan.PDF", size: 10, status: .notDownloaded)
        #expect(try matches("name LIKE '*.txt'", txt) && !matches("name LIKE '*.txt'", pdf))
        #expect(try matches("conflict == true OR status == notDownloaded", pdf))
        #expect(try !matches("conflict == true OR status == notDownloaded", txt))
        #expect(try matches("path BEGINSWITH 'Documents/Reports' AND size > 10MB", txt))
        #expect(try !matches("path BEGINSWITH 'Documents/Reports' AND size > 10MB", pdf))
    }

    @Test func everyAttributeAndOperator() throws {
        var i = Self.item("Documents/Notes/Ünïcode 文件.md", size: 2048)
        i.downloading = true; i.percentDownloaded = 42; i.uploading = false; i.uploaded = true; i.percentUploaded = 100
        i.downloadError = "disk full"
        let cases: [(String, Bool)] = [
            ("path == 'Documents/Notes/Ünïcode 文件.md'", true), ("path != 'x'", true),
            ("name ENDSWITH '.md'", true), ("name BEGINSWITH 'Ünï'", true), ("name CONTAINS '文件'", true),
            ("name LIKE 'ünï*'", false), ("name LIKE[c] 'ünï*'", true), ("name LIKE '?nïcode*'", true), ("name CONTAINS[c] 'ÜNÏ'", true), ("name CONTAINS 'ÜNÏ'", false),
            ("itemID == '\(i.itemID.description.lowercased())'", true),
            ("kind == file", true), ("kind == 'folder'", false),
            ("size == 2048", true), ("size == 2KiB", true), ("size >= 2KB", true), ("size < 2KB", false), ("size <= 2048", true), ("size > 1k", true),
            ("created < -7d", true), ("created > -7d", false), ("modified > -2h", true), ("modified > -30m", false),
            ("modified >= '2020-01-01'", true), ("modified < '2020-01-01T00:00:00Z'", false),
            ("status == current", true), ("status != notDownloaded", true),
            ("downloading == true", true), ("percentDownloaded > 40 AND percentDownloaded < 50", true),
            ("uploading == false", true), ("uploaded == YES", true), ("percentUploaded == 100", true),
            ("conflict == false", true), ("excluded == false", true),
            ("downloadError != nil", true), ("uploadError == nil", true), ("downloadError CONTAINS 'full'", true),
            ("TRUEPREDICATE", true), ("FALSEPREDICATE", false), ("NOT (size > 1MB)", true), ("!(size > 1MB)", true),
            ("size > 1 && kind == file", true), ("size > 1MB || kind == file", true), ("size = 2048", true), ("size <> 2048", false),
            ("(name LIKE '*.md' OR name LIKE '*.txt') AND NOT conflict == true", true),
        ]
        for (text, expected) in cases {
            #expect(try matches(text, i) == expected, "\(text)")
        }
    }

    @Test func errorsNameThePosition() {
        let cases: [(String, Int, String)] = [
            ("", 1, "empty"),
            ("size >", 7, "value"),
            ("size > 'big'", 8, "number"),
            ("colour == 'red'", 1, "unknown attribute"),
            ("name LIKE '*.txt", 11, "not closed"),
            ("name == 'a' AND", 16, "attribute"),
            ("(size > 1", 10, "')'"),
            ("size > 10 parsecs", 11, "after a complete"),
            ("size > 10XB", 8, "unit"),
            ("status == sleeping", 11, "unknown status"),
            ("conflict > true", 10, "=="),
            ("size CONTAINS 'x'", 6, "text attribute"),
            ("modified > 'yesterday'", 12, "ISO-8601"),
            ("name == 'a' # comment", 13, "unexpected character"),
            ("name LIKE[x] 'a'", 11, "modifier"),
        ]
        for (text, column, fragment) in cases {
            do {
                _ = try QueryPredicate.parse(text)
                Issue.record("'\(text)' parsed")
            } catch let e as QueryPredicateError {
                #expect(e.column == column, "'\(text)': \(e)")
                #expect(e.message.contains(fragment), "'\(text)': \(e)")
            } catch {
                Issue.record("'\(text)': unexpected \(error)")
            }
        }
    }

    // MARK: properties

    func randomPredicate(_ rng: inout SeededRandom, depth: Int = 0) -> QueryPredicate {
        let r = depth > 3 ? 4 : Int.random(in: 0..<6, using: &rng)
        switch r {
        case 0: return .not(randomPredicate(&rng, depth: depth + 1))
        case 1: return .and(randomPredicate(&rng, depth: depth + 1), randomPredicate(&rng, depth: depth + 1))
        case 2: return .or(randomPredicate(&rng, depth: depth + 1), randomPredicate(&rng, depth: depth + 1))
        case 3: return .always(Bool.random(using: &rng))
        default:
            let attr = QueryPredicate.Attribute.allCases.randomElement(using: &rng)!
            switch attr.type {
            case .string:
                let op = QueryPredicate.Operator.allCases.randomElement(using: &rng)!
                let v: String
                switch attr {
                case .status: v = MetadataItem.Status.allCases.randomElement(using: &rng)!.rawValue
                case .kind: v = ["file", "folder"].randomElement(using: &rng)!
                default: v = ["a", "*.txt", "Doc*", "it's", "文", "\\*", "?"].randomElement(using: &rng)!
                }
                return .compare(attr, op, .string(v), caseInsensitive: Bool.random(using: &rng))
            case .number:
                let op = [QueryPredicate.Operator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].randomElement(using: &rng)!
                return .compare(attr, op, .number(Double(Int.random(in: 0...5000, using: &rng))), caseInsensitive: false)
            case .bool:
                return .compare(attr, Bool.random(using: &rng) ? .equal : .notEqual, .bool(Bool.random(using: &rng)), caseInsensitive: false)
            case .date:
                let op = [QueryPredicate.Operator.less, .greater, .lessOrEqual, .greaterOrEqual].randomElement(using: &rng)!
                return .compare(attr, op, .relativeDate(-Double(Int.random(in: 1...100, using: &rng)) * 3600), caseInsensitive: false)
            }
        }
    }

    func randomItem(_ rng: inout SeededRandom) -> MetadataItem {
        let names = ["a.txt", "Doc.md", "it's.txt", "文件", "*", "b"]
        var i = Self.item("Documents/" + names.randomElement(using: &rng)!, size: Int.random(in: 0...5000, using: &rng),
                          kind: Bool.random(using: &rng) ? .file : .folder, status: MetadataItem.Status.allCases.randomElement(using: &rng)!,
                          modified: Self.now.addingTimeInterval(-Double(Int.random(in: 0...400_000, using: &rng))), conflict: Bool.random(using: &rng))
        i.downloading = Bool.random(using: &rng)
        i.percentDownloaded = Double(Int.random(in: 0...100, using: &rng))
        i.uploadError = Bool.random(using: &rng) ? nil : "quota"
        return i
    }

    @Test func printedPredicatesParseBackAndObeyBooleanLaws() throws {
        var rng = SeededRandom.forTest("predicate.roundtrip")
        for _ in 0..<2000 {
            let p = randomPredicate(&rng), q = randomPredicate(&rng)
            let parsed = try QueryPredicate.parse(p.description)
            #expect(parsed == p, "\(p.description)")
            for _ in 0..<4 {
                let item = randomItem(&rng)
                let (a, b) = (p.matches(item, now: Self.now), q.matches(item, now: Self.now))
                #expect(QueryPredicate.not(p).matches(item, now: Self.now) == !a)
                #expect(QueryPredicate.and(p, q).matches(item, now: Self.now) == (a && b))
                #expect(QueryPredicate.or(p, q).matches(item, now: Self.now) == (a || b))
                #expect(parsed.matches(item, now: Self.now) == a)
            }
        }
    }

    @Test func hostileTextNeverCrashesAndErrorsStayInBounds() {
        var rng = SeededRandom.forTest("predicate.fuzz")
        let alphabet = Array("sizenamepathstatus ()'\"[]!=<>&|*?\\-+0123456789.KMGBdhwANDORNOTLIKE文😀\t\n")
        let seeds = ["name LIKE '*.txt'", "size > 10MB AND (conflict == true OR status == notDownloaded)", "modified > -7d"]
        var errors = 0
        for n in 0..<5000 {
            var chars: [Character]
            if n % 2 == 0 {
                chars = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            } else {
                chars = Array(seeds.randomElement(using: &rng)!)
                for _ in 0..<Int.random(in: 1...4, using: &rng) where !chars.isEmpty {
                    let at = Int.random(in: 0..<chars.count, using: &rng)
                    if Bool.random(using: &rng) { chars.remove(at: at) } else { chars.insert(alphabet.randomElement(using: &rng)!, at: at) }
                }
            }
            let text = String(chars)
            do { _ = try QueryPredicate.parse(text) } catch let e as QueryPredicateError {
                errors += 1
                #expect(e.column >= 1 && e.column <= text.count + 1, "'\(text)': column \(e.column)")
            } catch {
                Issue.record("'\(text)': \(error)")
            }
        }
        #expect(errors > 100)
        // Deep nesting and huge input are refused, not a stack overflow.
        #expect(throws: QueryPredicateError.self) { try QueryPredicate.parse(String(repeating: "(", count: 10_000) + "TRUEPREDICATE" + String(repeating: ")", count: 10_000)) }
        #expect(throws: QueryPredicateError.self) { try QueryPredicate.parse(String(repeating: "NOT ", count: 1000) + "TRUEPREDICATE") }
    }

    @Test func reducerReportsAddedChangedRemovedInOrder() {
        var results = QueryResults(MetadataQueryDefinition(scope: .documents, predicate: try! QueryPredicate.parse("size > 10"), sort: .size))
        let a = Self.item("Documents/a", size: 50), b = Self.item("Documents/b", size: 20), outside = Self.item("Top.txt", size: 99)
        var d = results.reduce([a, b, outside, Self.item("Documents/small", size: 1)], now: Self.now)
        #expect(d.added.map(\.name) == ["b", "a"] && d.changed.isEmpty && d.removed.isEmpty)
        var b2 = b; b2.percentDownloaded = 50; b2.downloading = true
        var a2 = a; a2.size = 5
        d = results.reduce([a2, b2, outside], now: Self.now)
        #expect(d.changed.map(\.name) == ["b"] && d.removed.map(\.name) == ["a"] && d.added.isEmpty)
        #expect(results.reduce([a2, b2, outside], now: Self.now).isEmpty)
        #expect(results.ordered.map(\.name) == ["b"])
    }

    /// The sort of a gathering (keys and positions sorted, not items) gives exactly the query's
    /// order (`areInOrder`) for every key and direction, names equal but for case and equal
    /// sizes and dates included; a first reduce's `added` is the ordered results.
    @Test func sortingByKeysGivesTheQuerysOrder() {
        var rng = SeededRandom.forTest("query.sort")
        let names = ["a", "B", "b", "Plan", "plan", "z.txt", "Zeta", "ä", "10", "9"]
        for round in 0..<60 {
            let items = (0..<Int(rng.next() % 200)).map { i in
                Self.item("Documents/d\(rng.next() % 5)/\(names[Int(rng.next() % UInt64(names.count))]) \(i)", size: Int(rng.next() % 4),
                          modified: rng.next() % 4 == 0 ? nil : Self.now.addingTimeInterval(-Double(rng.next() % 3)))
            }
            for key in MetadataQueryDefinition.SortKey.allCases {
                for ascending in [true, false] {
                    let d = MetadataQueryDefinition(scope: .data, sort: key, ascending: ascending)
                    let expected = items.sorted(by: d.areInOrder).map(\.itemID)
                    #expect(d.sorted(items).map(\.itemID) == expected, "seed \(rng.seed) round \(round) \(key) \(ascending)")
                    var results = QueryResults(d)
                    let added = results.reduce(items, now: Self.now).added
                    #expect(added.map(\.itemID) == expected && results.ordered.map(\.itemID) == expected, "seed \(rng.seed) round \(round)")
                }
            }
        }
    }
}
