/// The thin, product-free Swift binding over libfuse 3 (issue 4).
import CFuse3
