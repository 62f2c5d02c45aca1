import Testing

@testable import ContentCache

@Suite struct ByteRangesTests {
    @Test func insertMergesOverlappingAndTouchingRanges() {
        var ranges = ByteRanges()
        ranges.insert(10..<20)
        ranges.insert(30..<40)
        ranges.insert(0..<5)
        #expect(ranges.ranges == [0..<5, 10..<20, 30..<40])
        ranges.insert(20..<25)
        #expect(ranges.ranges == [0..<5, 10..<25, 30..<40], "touching merges")
        ranges.insert(3..<32)
        #expect(ranges.ranges == [0..<40], "one range swallows several")
        ranges.insert(50..<50)
        #expect(ranges.ranges == [0..<40] && ranges.count == 40, "empty ranges add nothing")
    }

    @Test func containsGapsAndRemove() {
        var ranges = ByteRanges([30..<40, 0..<10, 5..<12])
        #expect(ranges.ranges == [0..<12, 30..<40])
        #expect(ranges.contains(2..<12) && ranges.contains(30..<40) && ranges.contains(50..<50))
        #expect(!ranges.contains(10..<31) && !ranges.contains(39..<41) && !ranges.contains(12..<13))
        #expect(ranges.range(containing: 11) == 0..<12 && ranges.range(containing: 12) == nil)
        #expect(ranges.gaps(in: 0..<50) == [12..<30, 40..<50])
        #expect(ranges.gaps(in: 5..<35) == [12..<30])
        #expect(ranges.gaps(in: 31..<39).isEmpty)
        #expect(ByteRanges().gaps(in: 3..<9) == [3..<9])
        ranges.remove(8..<32)
        #expect(ranges.ranges == [0..<8, 32..<40])
        ranges.remove(0..<100)
        #expect(ranges.isEmpty)
    }

    @Test func clippingDropsWhatAFileDoesNotHold() {
        let ranges = ByteRanges([0..<10, 20..<30, 40..<50])
        #expect(ranges.clipped(to: 25).ranges == [0..<10, 20..<25])
        #expect(ranges.clipped(to: 20).ranges == [0..<10])
        #expect(ranges.clipped(to: 0).isEmpty)
    }
}
