import Digests
import Foundation
import Testing

/// The digests against their standards' test vectors.
struct DigestTests {
    @Test func sha256() {
        #expect(hex(Digest.sha256(Data())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(Digest.sha256(Data("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // 448 bits: the FIPS 180-2 vector that spans two blocks.
        let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(
            hex(Digest.sha256(Data(twoBlocks.utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// RFC 7636, Appendix B: the code challenge of the example verifier.
    @Test func pkceChallenge() {
        let digest = Digest.sha256(Data("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".utf8))
        let challenge = Data(digest).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_")
            .replacing("=", with: "")
        #expect(challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    /// RFC 4231, test cases 1, 2 and 6 (a key longer than the block).
    @Test func hmacSHA256() {
        #expect(
            hex(Digest.hmacSHA256(key: Data(repeating: 0x0b, count: 20), Data("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hex(Digest.hmacSHA256(key: Data("Jefe".utf8), Data("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            hex(
                Digest.hmacSHA256(
                    key: Data(repeating: 0xaa, count: 131),
                    Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    /// RFC 1321, A.5.
    @Test func md5() {
        #expect(hex(Digest.md5(Data())) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(hex(Digest.md5(Data("abc".utf8))) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(hex(Digest.md5(Data("message digest".utf8))) == "f96b697d7cb7938d525a2f31aaf161d0")
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
