import CLibCrypto
import Foundation

/// SHA-256, HMAC-SHA256 and MD5 by the system's OpenSSL libcrypto: PKCE's code challenge (RFC 7636) in the client,
/// and the simulator's passwords, SAML signatures and PHP's `md5`. swift-crypto would compile a second BoringSSL
/// (beside swift-nio-ssl's, whose symbols are its own) for these few digests: minutes of every clean build.
package enum Digest {
    package static func sha256(_ data: Data) -> [UInt8] { digest(data, EVP_sha256()) }

    /// For what PHP's `md5` names (the simulator), never for security.
    package static func md5(_ data: Data) -> [UInt8] { digest(data, EVP_md5()) }

    package static func hmacSHA256(key: Data, _ data: Data) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { key in
            data.withUnsafeBytes { data in
                HMAC(
                    EVP_sha256(), key.baseAddress, Int32(key.count),
                    data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    data.count, &output, &length)
            }
        }
        // Fails only without memory: the key and the digest are always accepted.
        precondition(result != nil, "libcrypto's HMAC failed")
        return Array(output.prefix(Int(length)))
    }

    private static func digest(_ data: Data, _ type: OpaquePointer?) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let status = data.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &output, &length, type, nil) }
        // Fails only without memory, or for MD5 where a FIPS policy disables it (the simulator's PHP `md5`).
        precondition(status == 1, "libcrypto's digest failed")
        return Array(output.prefix(Int(length)))
    }
}
