import CMalloc
import Glibc
import Testing

@testable import Daemon

/// Root's indexing RSS (docs/performance.md): after the daemon's malloc settings, a large block freed does not make
/// the next large blocks come from an arena, where they stayed resident once freed.
@Suite struct MallocSettingsTests {
    /// glibc's sliding threshold would have risen to 8 MiB with the free below, and served 3 MiB from an arena. A
    /// mapped block is rounded up to whole pages with its 16-byte header; an arena's chunk is not.
    @Test func aLargeBlockIsMappedOnItsOwnAfterALargerOneWasFreed() throws {
        CampusDaemon.returnLargeBlocksWhenFreed()
        let larger = try #require(malloc(8 << 20))
        memset(larger, 1, 8 << 20)
        free(larger)
        let block = try #require(malloc(3 << 20))
        defer { free(block) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        #expect((malloc_usable_size(block) + 16) % page == 0, "\(malloc_usable_size(block)) bytes usable")
    }
}
