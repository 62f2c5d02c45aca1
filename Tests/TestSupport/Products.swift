import Foundation

/// Where the build put this package's products (`campusfs`, `campusfs-fuzz`, `studip-sim`): beside the running
/// test binary, so the path follows `--scratch-path` and `-c release`.
public let builtProductsDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent()
