import Foundation
import Testing
import UbiqClient
import UbiqCore
import UbiqEngine
import UbiqTesting

/// #39 §2: the account's device list is changed read-modify-write by several devices — an
/// approval adds one while another device rolls the key. Each write replaces only the list it
/// read (`expecting`), so no change is lost: every device whose registration returned is on
/// the final list and holds the rolled ring; one that came too late is refused, not dropped.
@Suite("End-to-end encryption: the device list under concurrent changes", .serialized)
struct DeviceListRaceTests {
    @Test func aRollAndApprovalsAtOnceLoseNoDevice() async throws {
        try await withFleet(backend: .encrypted) { fleet in
            let a = try await fleet.device("A")
            let client = UbiqAPIClient(baseURL: fleet.server.baseURL, token: a.config.token, trusting: fleet.server.trusted)
            let service = AccountKeyService(client: client, user: "alice")
            var ring = AccountKeyring(try #require(fleet.keys["alice"]))
            let me = AccountKeyService.deviceKey(holder: "a", name: "A")
            try await service.register(me.1, ring: ring)
            var registered = 0
            for round in 0..<4 {
                let others = (0..<5).map { AccountKeyService.deviceKey(holder: "r\(round)-d\($0)", name: "d\($0)") }
                let before = ring
                async let rolled = service.roll(before, revoking: nil, me: me.1)
                let done = await withTaskGroup(of: (Int, Bool).self) { g in
                    for (i, o) in others.enumerated() { g.addTask { (i, (try? await service.register(o.1, ring: before)) != nil) } }
                    var out: [Int: Bool] = [:]
                    for await (i, ok) in g { out[i] = ok }
                    return out
                }
                let r = try await rolled
                ring = r.ring
                let all = try await client.accountKeys()
                let list = try DeviceKeyList(text: try #require(all[DeviceKeyList.serverName]), ring: ring)
                #expect(list.epoch == ring.current.epoch && list.entry("a") != nil)
                for (i, ok) in done where ok {
                    registered += 1
                    let holder = "r\(round)-d\(i)"
                    #expect(list.entry(holder) != nil, "round \(round): \(holder) registered and was dropped")
                    let sealed = try #require(all[AccountKeyService.keyringName(holder)], "round \(round): no ring sealed to \(holder)")
                    #expect(try DeviceEnrolment.open(sealed, with: others[i].0, user: "alice", holder: holder) == ring.text)
                }
            }
            #expect(registered > 0, "no registration got in")
        }
    }
}
