import Foundation

/// Exercise code that compiles: a header comment naming sheet and lecture, functions from a small pool of classic
/// exercises (commented with the lecture's terms), and a `main`. Any size stays valid code: the program is cut to
/// as many functions as fit, and the rest is filled with fixed-width comment lines before `main` — generated
/// per line from (seed, line index), so a chunk costs O(length) like every other kind.
///
/// Layout: `head` (header and functions) · padding (blank lines, then comment lines) · `tail` (`main`).
enum ContentCode {
    typealias Layout = ContentGenerator.PaddedLayout

    /// Bytes of one padding comment line, newline included.
    static let lineWidth = 80

    private static let cache = ContentGenerator.LayoutCache<Layout>()

    static func bytes(profile: ContentProfile, size: Int, range: Range<Int>) -> [UInt8] {
        let layout = cache.value(seed: profile.seed, size: size) { makeLayout(profile: profile, size: size) }
        let language = profile.course.code ?? .python
        return layout.bytes(range) { padding in
            Self.padding(profile: profile, language: language, total: layout.padding, range: padding)
        }
    }

    /// The longest program of header, functions and `main` that fits in `size`; only padding if none does.
    static func makeLayout(profile: ContentProfile, size: Int) -> Layout {
        let language = profile.course.code ?? .python
        var rng = SplitMix64(seed: SplitMix64.derive(profile.seed, 0xC0DE))
        let tail = Array(main(profile: profile, language: language).utf8)
        var head = Array(header(profile: profile, language: language).utf8)
        guard head.count + tail.count <= size else { return Layout(head: [], padding: size, tail: []) }
        for snippet in rng.shuffled(snippets(language)) {
            let comment = profile.sentence(lecture: profile.lecture, rng: &rng)
            let function = Array((snippet.replacingOccurrences(of: "NOTE", with: comment) + "\n").utf8)
            guard head.count + function.count + tail.count <= size else { break }
            head += function
        }
        return Layout(head: head, padding: size - head.count - tail.count, tail: tail)
    }

    /// `total % lineWidth` blank lines, then comment lines of exactly `lineWidth` bytes each.
    private static func padding(
        profile: ContentProfile, language: ContentCatalogue.Language, total: Int, range: Range<Int>
    )
        -> [UInt8]
    {
        let blank = total % lineWidth
        var result: [UInt8] = []
        result.reserveCapacity(range.count)
        if range.lowerBound < blank {
            result += [UInt8](
                repeating: ContentGenerator.newline, count: min(range.upperBound, blank) - range.lowerBound)
        }
        guard range.upperBound > blank else { return result }
        let first = max(range.lowerBound, blank) - blank
        let last = range.upperBound - blank
        let marker = language == .python ? "# " : language == .java ? "    // " : "// "
        for line in (first / lineWidth)...((last - 1) / lineWidth) {
            var rng = SplitMix64(seed: SplitMix64.derive(profile.seed, 0x11_1E00_0000 + UInt64(line)))
            var bytes: [UInt8] = []
            // A sentence that fits, if one of a few does; else one cut at a space.
            for _ in 0..<4 where bytes.isEmpty || bytes.count >= lineWidth {
                let note =
                    (profile.course.english ? "Note \(line + 1): " : "Hinweis \(line + 1): ")
                    + profile.sentence(lecture: profile.lecture, rng: &rng)
                bytes = Array((marker + note).utf8)
            }
            if bytes.count >= lineWidth, let space = bytes[..<lineWidth].lastIndex(of: UInt8(ascii: " ")) {
                bytes.removeSubrange(space...)
            }
            bytes += [UInt8](repeating: UInt8(ascii: " "), count: max(0, lineWidth - bytes.count))
            let text = ContentGenerator.terminated(bytes, length: lineWidth)
            let start = line * lineWidth
            result += text[max(first, start) - start..<min(last, start + lineWidth) - start]
        }
        return result
    }

    private static func header(profile: ContentProfile, language: ContentCatalogue.Language) -> String {
        let course = profile.course
        let sheet = course.english ? "Exercise sheet" : "Übungsblatt"
        let lines = [
            "\(sheet) \(profile.number.padded(2)) – \(profile.lecture.title)",
            "",
            "\(course.number) \(course.title)",
            (course.english ? "Topics: " : "Themen: ") + profile.lecture.terms.joined(separator: ", "),
            course.english
                ? "Complete the functions below and run the file to check them."
                : "Ergänzen Sie die Funktionen unten und führen Sie die Datei aus, um sie zu prüfen.",
        ]
        switch language {
        case .python:
            return "\"\"\"" + lines.joined(separator: "\n") + "\n\"\"\"\n\nfrom __future__ import annotations\n\n\n"
                + "def gcd(a: int, b: int) -> int:\n    while b:\n        a, b = b, a % b\n    return a\n"
        case .c:
            return "/*\n" + lines.map { " * \($0)".trimmingTrailingSpaces }.joined(separator: "\n")
                + "\n */\n\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
                + "int gcd(int a, int b) {\n    while (b != 0) {\n        int r = a % b;\n        a = b;\n        b = r;\n    }\n"
                + "    return a;\n}\n"
        case .java:
            return "import java.util.HashMap;\nimport java.util.Map;\n\n/**\n"
                + lines.map { " * \($0)".trimmingTrailingSpaces }.joined(separator: "\n")
                + "\n */\nclass Aufgabe\(profile.number.padded(2)) {\n"
                + "    static int gcd(int a, int b) {\n        return b == 0 ? a : gcd(b, a % b);\n    }\n"
        }
    }

    private static func main(profile: ContentProfile, language: ContentCatalogue.Language) -> String {
        let done = profile.course.english ? "Sheet" : "Blatt"
        let message = "\(done) \(profile.number.padded(2)): gcd(84, 36) = "
        switch language {
        case .python:
            return "\n\ndef main() -> None:\n    print(\"\(message)\" + str(gcd(84, 36)))\n\n\n"
                + "if __name__ == \"__main__\":\n    main()\n"
        case .c:
            return "\nint main(void) {\n    printf(\"\(message)%d\\n\", gcd(84, 36));\n    return 0;\n}\n"
        case .java:
            return "\n    public static void main(String[] args) {\n"
                + "        System.out.println(\"\(message)\" + gcd(84, 36));\n    }\n}\n"
        }
    }

    /// Classic exercise functions; `NOTE` becomes a sentence about the lecture. (`gcd`, which `main` calls, is in
    /// the header, so every program that has a `main` has it.)
    private static func snippets(_ language: ContentCatalogue.Language) -> [String] {
        switch language {
        case .python: python
        case .c: c
        case .java: java
        }
    }

    private static let python = [
        """


        def binary_search(items: list[int], target: int) -> int:
            \"\"\"NOTE\"\"\"
            low, high = 0, len(items) - 1
            while low <= high:
                middle = (low + high) // 2
                if items[middle] == target:
                    return middle
                if items[middle] < target:
                    low = middle + 1
                else:
                    high = middle - 1
            return -1
        """,
        """


        def insertion_sort(items: list[int]) -> list[int]:
            \"\"\"NOTE\"\"\"
            result = list(items)
            for i in range(1, len(result)):
                key = result[i]
                j = i - 1
                while j >= 0 and result[j] > key:
                    result[j + 1] = result[j]
                    j -= 1
                result[j + 1] = key
            return result
        """,
        """


        class Node:
            \"\"\"NOTE\"\"\"

            def __init__(self, key: int) -> None:
                self.key = key
                self.left: Node | None = None
                self.right: Node | None = None


        def insert(root: Node | None, key: int) -> Node:
            if root is None:
                return Node(key)
            if key < root.key:
                root.left = insert(root.left, key)
            else:
                root.right = insert(root.right, key)
            return root
        """,
        """


        def fibonacci(n: int, memo: dict[int, int] | None = None) -> int:
            \"\"\"NOTE\"\"\"
            memo = {} if memo is None else memo
            if n < 2:
                return n
            if n not in memo:
                memo[n] = fibonacci(n - 1, memo) + fibonacci(n - 2, memo)
            return memo[n]
        """,
        """


        def count_words(text: str) -> dict[str, int]:
            \"\"\"NOTE\"\"\"
            counts: dict[str, int] = {}
            for word in text.lower().split():
                counts[word] = counts.get(word, 0) + 1
            return counts
        """,
        """


        def mean_and_variance(values: list[float]) -> tuple[float, float]:
            \"\"\"NOTE\"\"\"
            if not values:
                raise ValueError("values must not be empty")
            mean = sum(values) / len(values)
            return mean, sum((v - mean) ** 2 for v in values) / len(values)
        """,
    ]

    private static let c = [
        """

        /* NOTE */
        int binary_search(const int *items, int count, int target) {
            int low = 0, high = count - 1;
            while (low <= high) {
                int middle = low + (high - low) / 2;
                if (items[middle] == target) return middle;
                if (items[middle] < target) low = middle + 1;
                else high = middle - 1;
            }
            return -1;
        }
        """,
        """

        /* NOTE */
        struct ring_buffer {
            int data[16];
            size_t head, count;
        };

        int ring_push(struct ring_buffer *ring, int value) {
            if (ring->count == 16) return -1;
            ring->data[(ring->head + ring->count) % 16] = value;
            ring->count++;
            return 0;
        }
        """,
        """

        /* NOTE */
        int fifo_page_faults(const int *pages, int count, int frames) {
            int loaded[64];
            int next = 0, used = 0, faults = 0;
            for (int i = 0; i < count; i++) {
                int hit = 0;
                for (int j = 0; j < used; j++) hit |= loaded[j] == pages[i];
                if (hit) continue;
                faults++;
                if (used < frames && used < 64) loaded[used++] = pages[i];
                else { loaded[next] = pages[i]; next = (next + 1) % frames; }
            }
            return faults;
        }
        """,
        """

        /* NOTE */
        char *duplicate(const char *text) {
            size_t length = strlen(text) + 1;
            char *copy = malloc(length);
            if (copy != NULL) memcpy(copy, text, length);
            return copy;
        }
        """,
    ]

    private static let java = [
        """

            /** NOTE */
            static int binarySearch(int[] items, int target) {
                int low = 0, high = items.length - 1;
                while (low <= high) {
                    int middle = (low + high) >>> 1;
                    if (items[middle] == target) return middle;
                    if (items[middle] < target) low = middle + 1;
                    else high = middle - 1;
                }
                return -1;
            }
        """,
        """

            /** NOTE */
            static Map<String, Integer> countWords(String text) {
                Map<String, Integer> counts = new HashMap<>();
                for (String word : text.toLowerCase().split("\\\\s+")) {
                    counts.merge(word, 1, Integer::sum);
                }
                return counts;
            }
        """,
        """

            /** NOTE */
            static void insertionSort(int[] items) {
                for (int i = 1; i < items.length; i++) {
                    int key = items[i];
                    int j = i - 1;
                    while (j >= 0 && items[j] > key) {
                        items[j + 1] = items[j];
                        j--;
                    }
                    items[j + 1] = key;
                }
            }
        """,
    ]
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
