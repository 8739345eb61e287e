import Foundation
import UbiqCore
import UbiqDaemonProtocol
import UbiqEngine

/// Daemon requests of every shape, with values a hostile program would pick: what the fuzzers
/// of the daemon's socket start from.
public enum DaemonRequestSamples {
    public static let all: [DeviceRequest] = [
        .hello(version: 1, client: "fuzz"), .hello(version: Int.max), .watchIdentity, .kvSync, .containers, .status, .sync,
        .coordinate(paths: ["Documents/a.txt", "../etc/passwd"], writing: true),
        .list(query: QuerySpec(predicate: "size > 10 && name like '*.txt'", scope: "documents", sort: "size", intervalMillis: -1)),
        .watch(query: QuerySpec(predicate: nil, scope: "data", sort: "name", intervalMillis: Int.max)),
        .versions(path: "Documents/a.txt"), .resolve(path: "a", keep: "not-a-uuid"), .keepBoth(path: ""),
        .mergeDraft(path: "a", version: nil), .rename(path: "a", name: "b/../c"), .makeFolder(path: "x\u{0}y"),
        .download(paths: []), .evict(paths: ["/abs"]), .cancel(paths: ["a"]), .pin(paths: ["a"], on: true), .retry(paths: []),
        .pause(on: false), .hold(paths: ["a"], on: true), .remove(paths: ["a", "a"]), .trash, .restore(path: "a"), .emptyTrash,
        .kvList, .kvGet(key: ""), .kvHistory(key: "k"),
        .kvSet(values: ["s": .string("é\u{1F600}"), "n": .int(Int64.min), "d": .double(-0.0), "b": .bool(true),
                        "x": .data(Data([0, 255])), "a": .array([.array([.dictionary(["k": .int(1)])])]), "gone": nil], origin: "prog"),
        .kvWatch(local: "tag"), .devices,
        .versionContent(path: "a", version: "v", limit: Int.max, offset: Int.min),
    ]

    /// The bytes mutations put in: JSON's own, a NUL, a newline, bytes that are not UTF-8.
    public static let alphabet = Array("{}[]:,\"0123456789-eE.\\ntrufalsncoiaepvx ".utf8) + [0, 0x0A, 0xFF, 0xC3]
}
