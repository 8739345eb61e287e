import Foundation
import Testing
import UbiqCore
import UbiqDaemonProtocol
@testable import UbiqEngine
import UbiqTesting

/// A seeded fuzzer of what the daemon reads from other programs: the request line (a
/// ``DeviceRequest``, perhaps with `"container"` beside it). Well-formed requests come back as
/// they were sent; damaged ones are a clear error — never a trap. (Against the running daemon:
/// `DaemonFuzzTests`.)
@Suite("Daemon request lines")
struct DaemonWireFuzzTests {
    @Test func wellFormedRequestsComeBackAsSentAndDamagedOnesNeverTrap() throws {
        var rng = SeededRandom.forTest("daemon.requests")
        let containers: [ContainerID?] = [nil, try ContainerID(validating: "iCloud.com.example.fuzz")]
        // Every sample, with and without a container, read back as it was written.
        for request in DaemonRequestSamples.all {
            for container in containers {
                var line = Array(DaemonWire.encodeRequest(request, container: container).readableBytesView)
                #expect(line.last == 0x0A)
                line.removeLast()
                let (back, id) = try DaemonWire.decodeRequest(Data(line))
                #expect(back == request && id == container, "\(request)")
            }
        }
        // Damaged lines: an error or a request, never a trap.
        var taken = 0, refused = 0
        let cases = FuzzCases.count(3_000)
        for _ in 0..<cases {
            let request = DaemonRequestSamples.all.randomElement(using: &rng)!
            var line = Array(DaemonWire.encodeRequest(request, container: containers.randomElement(using: &rng)!).readableBytesView.dropLast())
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: line = rng.bytes(Int.random(in: 0...200, using: &rng))
            case 1: line = Array(line.prefix(Int.random(in: 0...line.count, using: &rng)))
            case 2:  // nested past any reader's depth, where a value belongs
                let depth = Int.random(in: 100...5_000, using: &rng)
                line = Array("{\"kvSet\":{\"values\":{\"k\":".utf8) + Array(repeating: UInt8(ascii: "["), count: depth) + Array("}}}".utf8)
            case 3: line = Array(#"{"container":"#.utf8) + rng.mutate(Array(#""iCloud.a","status":{}}"#.utf8), edits: 1...3, alphabet: DaemonRequestSamples.alphabet)
            default: line = rng.mutate(line, edits: 1...6, alphabet: DaemonRequestSamples.alphabet)
            }
            if (try? DaemonWire.decodeRequest(Data(line))) != nil { taken += 1 } else { refused += 1 }
        }
        print("[daemon.requests] \(cases) damaged lines: \(taken) still a request, \(refused) refused")
        #expect(taken + refused == cases && refused > 0)
    }

    @Test func aContainerBesideTheRequestMustBeAValidName() {
        for bad in [#"{"container":"../x","status":{}}"#, #"{"container":7,"status":{}}"#, #"{"container":"","status":{}}"#,
                    #"["container"]"#, #"{"container":"a/b","status":{}}"#] {
            #expect(throws: (any Error).self, "\(bad)") { _ = try DaemonWire.decodeRequest(Data(bad.utf8)) }
        }
    }
}
