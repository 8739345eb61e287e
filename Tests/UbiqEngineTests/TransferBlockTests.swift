import CFileSupport
import Foundation
import Testing
import UbiqTesting
@_spi(CustomByteBufferAllocator) import NIOCore
import UbiqTransport

/// The transfer blocks behind chunk batches' buffers (`ubiq_block_alloc`): whatever sizes and
/// resizes come, the bytes are kept, memory for direct I/O is aligned, and blocks go back for
/// reuse. The pool is shared with whatever else runs in this process, so nothing here counts on
/// which block comes back.
@Suite("Transfer blocks")
struct TransferBlockTests {
    @Test func bytesSurviveEveryResizeAndBlocksAreReused() throws {
        var rng = SeededRandom.forTest("transfer.blocks")
        let sizes = [1, 100, 4096, (1 << 20) - 1, 1 << 20, 5 << 20, (16 << 20) - 1, 16 << 20, (16 << 20) + 1, 20 << 20]
        for _ in 0..<40 {
            let size = Bool.random(using: &rng) ? sizes.randomElement(using: &rng)! : Int.random(in: 1...(24 << 20), using: &rng)
            let aligned = Bool.random(using: &rng)
            let p = try #require(aligned ? ubiq_block_alloc_aligned(size) : ubiq_block_alloc(size))
            if aligned { #expect(Int(bitPattern: p) % 4096 == 0, "size \(size)") }
            let pattern = UInt8.random(in: 0...255, using: &rng)
            let probe = [0, size / 2, size - 1]
            for i in probe { p.storeBytes(of: pattern &+ UInt8(truncatingIfNeeded: i), toByteOffset: i, as: UInt8.self) }
            if aligned {
                ubiq_block_free(p)
                continue
            }
            // Grow or shrink it, as a ByteBuffer does; what fits in both sizes stays.
            let newSize = Bool.random(using: &rng) ? sizes.randomElement(using: &rng)! : Int.random(in: 1...(24 << 20), using: &rng)
            let q = try #require(ubiq_block_realloc(p, size, newSize))
            for i in probe where i < newSize {
                #expect(q.load(fromByteOffset: i, as: UInt8.self) == pattern &+ UInt8(truncatingIfNeeded: i), "\(size) → \(newSize) at \(i)")
            }
            ubiq_block_free(q)
        }
        var inUse: Int32 = 0, idle: Int32 = 0
        let mapped = ubiq_block_stats(&inUse, &idle)
        #expect(mapped == inUse + idle && mapped <= 64)
        // A block freed is idle until someone takes it, not unmapped (below 16 idle ones).
        let block = try #require(ubiq_block_alloc(2 << 20))
        ubiq_block_free(block)
        _ = ubiq_block_stats(&inUse, &idle)
        #expect(idle >= 1)
    }

    /// ByteBuffers on the transfer allocator behave as any: written past their first capacity
    /// (within a block and beyond it), copied on write, read back whole.
    @Test func byteBuffersOnTransferBlocksKeepTheirBytes() {
        var rng = SeededRandom.forTest("transfer.bytebuffer")
        var buffer = ByteBufferAllocator.transfer.buffer(capacity: 3 << 20)
        var expected: [UInt8] = []
        while expected.count < 18 << 20 {
            let part = rng.bytes(Int.random(in: 1...(1 << 20), using: &rng))
            buffer.writeBytes(part)
            expected += part
        }
        let copy = buffer
        buffer.writeBytes([1, 2, 3])
        #expect(Array(copy.readableBytesView) == expected)
        #expect(Array(buffer.readableBytesView) == expected + [1, 2, 3])
    }
}
