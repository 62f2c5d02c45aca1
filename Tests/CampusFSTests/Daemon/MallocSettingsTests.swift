import CMalloc
import Glibc
import Testing

@testable import Daemon

/// Root's indexing RSS (docs/performance.md): after the daemon's malloc settings, a large block freed does not make
/// the next large blocks come from an arena, where they stayed resident once freed.
@Suite struct MallocSettingsTests {
    /// glibc's sliding threshold would have risen to 8 MiB with the free below, and served 3 MiB from an arena. A
    /// mapped block is rounded up to whole pages with its 16-byte header; an arena's chunk is not. The other tests
    /// of this process leave free chunks of their own in the arenas, which serve a request of any size first, so
    /// the blocks are taken until those are used up: with the settings one of the first 32 is mapped, without them
    /// none (the threshold stays at 8 MiB or above).
    @Test func aLargeBlockIsMappedOnItsOwnAfterALargerOneWasFreed() throws {
        CampusDaemon.returnLargeBlocksWhenFreed()
        let larger = try #require(malloc(8 << 20))
        memset(larger, 1, 8 << 20)
        free(larger)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var blocks: [UnsafeMutableRawPointer] = []
        defer { for block in blocks { free(block) } }
        var usable: [Int] = []
        for _ in 0..<32 {
            let block = try #require(malloc(3 << 20))
            blocks.append(block)
            usable.append(malloc_usable_size(block))
            if (malloc_usable_size(block) + 16) % page == 0 { break }
        }
        #expect(usable.contains { ($0 + 16) % page == 0 }, "bytes usable: \(usable)")
    }
}
