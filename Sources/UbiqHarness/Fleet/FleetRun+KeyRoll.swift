import Foundation
import UbiqCore

/// On an encrypted fleet: the account's key rolled in the middle of everything (as `ubiq
/// devices revoke` does), each device taking the new generation at its own moment — one at
/// once, the others within 1.5 s, as their push channels and refreshes would — while they keep
/// writing. Devices on the old generation meet records and settings sealed with the new one
/// (`key_missing`, retried), have their own commits refused by the server until they take it,
/// and upload after the roll chunks named before it; every device must still end with
/// everything.
extension FleetRun {
    func rollKey() async -> String {
        guard let current = ring else { return "no key to roll" }
        let next = current.rolled()
        ring = next
        report.keyRolls += 1
        // The device list says the new generation: the server refuses versions sealed with an
        // older one, so the devices that take it late have commits refused until they do.
        let list = (try? DeviceKeyList(epoch: next.current.epoch, entries: []).text(next)) ?? ""
        let told = (try? await devices[0].config.apiClient.putAccountKey(name: DeviceKeyList.serverName, value: list, replace: true)) != nil
        let order = Array(devices.indices).shuffled(using: &rng)
        var log: [String] = []
        for (i, d) in order.enumerated() {
            let ms = i == 0 ? 0 : Int.random(in: 0...1500, using: &rng)
            if ms == 0 { takeRing(d) } else { ringDue[d] = .now + .milliseconds(ms) }
            log.append("dev\(d) +\(ms) ms")
        }
        return "key rolled to epoch \(next.current.epoch)\(told ? "" : " (the server was not told)"): " + log.joined(separator: ", ")
    }

    /// `ubiq rekey` on device `d` while the others keep writing: what it holds sealed with an
    /// older generation goes up again sealed with the newest it holds (it may not have taken the
    /// last roll yet). Its edits racing another device's are what any edit's race is.
    func rekey(_ d: Int) async -> String {
        guard let ring, ring.keys.count > 1 else { return "dev\(d) rekey: one generation, nothing to seal again" }
        do {
            let r = try await devices[d].engine.rekey()
            report.rekeys += 1
            return "dev\(d) rekey: epoch \(r.epoch), \(r.resealed) sealed again, \(r.current) already, \(r.absent) not here, \(r.left) left"
        } catch {
            return "dev\(d) rekey failed: \(error)"
        }
    }

    /// Device `d` takes the newest ring: its running engine at once, its config for restarts.
    func takeRing(_ d: Int) {
        guard let ring else { return }
        devices[d].engine.keyring?.update(ring)
        devices[d].config.accountKey = ring.text
        try? devices[d].config.save(devices[d].home)
        note("dev\(d) took key epoch \(ring.current.epoch)")
    }

    /// Every name a content can have on the server: one per generation of the key it may have
    /// been named under.
    func hashes(_ bytes: [UInt8]) -> Set<ContentHash> {
        guard let ring else { return [hash(bytes)] }
        let ranges = Chunker.standard.chunkRanges(of: bytes)
        return Set(ring.keys(for: devices[0].config.container).newestFirst.map { keys in
            Manifest.contentHash(of: ranges.map { ChunkRef(hash: ChunkNaming(cipher: keys.chunks).name(Array(bytes[$0])), size: $0.count) })
        })
    }
}
