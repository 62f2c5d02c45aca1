import Digests
import Foundation

/// The two SAML messages the SP and the IdP exchange, as base64 XML shaped like SAML 2.0's.
///
/// Real deployments sign responses with XML-DSig and the IdP's key from metadata; here an HMAC-SHA256 over
/// every field the SP relies on (with a key only SP and IdP hold) gives the same property a client can
/// observe: a forged or altered response is refused. The AuthnRequest is plain base64 (the Redirect binding
/// deflates it first; clients pass it on without reading it).
enum SAML {
    struct AuthnRequest: Sendable, Equatable {
        var id: String
        /// The SP's entity id.
        var issuer: String
        var assertionConsumerService: String

        var encoded: String {
            let xml = """
                <samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" \
                xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="\(HTML.escape(id))" Version="2.0" \
                AssertionConsumerServiceURL="\(HTML.escape(assertionConsumerService))" \
                ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST">\
                <saml:Issuer>\(HTML.escape(issuer))</saml:Issuer></samlp:AuthnRequest>
                """
            return Data(xml.utf8).base64EncodedString()
        }

        init(id: String, issuer: String, assertionConsumerService: String) {
            self.id = id
            self.issuer = issuer
            self.assertionConsumerService = assertionConsumerService
        }

        init?(encoded: String) {
            guard let xml = SAML.xml(encoded), let id = SAML.attribute("ID", in: xml),
                let acs = SAML.attribute("AssertionConsumerServiceURL", in: xml),
                let issuer = SAML.element("saml:Issuer", in: xml)
            else { return nil }
            self.init(id: id, issuer: issuer, assertionConsumerService: acs)
        }
    }

    struct Response: Sendable, Equatable {
        var id: String
        var inResponseTo: String
        var destination: String
        var audience: String
        /// The NameID: the user's username, which Stud.IP maps to its account.
        var username: String
        var attributes: [String: String]

        /// Everything the SP relies on, in a fixed order, for the HMAC.
        private var signedText: String {
            ([id, inResponseTo, destination, audience, username]
                + attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: "\n")
        }

        func encoded(key: Data) -> String {
            let signature = Data(Digest.hmacSHA256(key: key, Data(signedText.utf8)))
            let attributeXML = attributes.sorted { $0.key < $1.key }.map {
                #"<saml:Attribute Name="\#(HTML.escape($0.key))"><saml:AttributeValue>\#(HTML.escape($0.value))</saml:AttributeValue></saml:Attribute>"#
            }.joined()
            let xml = """
                <samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" \
                xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" \
                ID="\(HTML.escape(id))" InResponseTo="\(HTML.escape(inResponseTo))" \
                Destination="\(HTML.escape(destination))" Version="2.0">\
                <samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>\
                <saml:Assertion><saml:Subject><saml:NameID>\(HTML.escape(username))</saml:NameID></saml:Subject>\
                <saml:Conditions><saml:AudienceRestriction><saml:Audience>\(HTML.escape(audience))</saml:Audience>\
                </saml:AudienceRestriction></saml:Conditions>\
                <saml:AttributeStatement>\(attributeXML)</saml:AttributeStatement></saml:Assertion>\
                <ds:Signature><ds:SignatureValue>\(signature.base64EncodedString())</ds:SignatureValue></ds:Signature>\
                </samlp:Response>
                """
            return Data(xml.utf8).base64EncodedString()
        }

        init(
            id: String, inResponseTo: String, destination: String, audience: String, username: String,
            attributes: [String: String]
        ) {
            self.id = id
            self.inResponseTo = inResponseTo
            self.destination = destination
            self.audience = audience
            self.username = username
            self.attributes = attributes
        }

        /// The response, or nil when it is malformed or its signature does not match its content.
        init?(encoded: String, key: Data) {
            guard let xml = SAML.xml(encoded), let id = SAML.attribute("ID", in: xml),
                let inResponseTo = SAML.attribute("InResponseTo", in: xml),
                let destination = SAML.attribute("Destination", in: xml),
                let audience = SAML.element("saml:Audience", in: xml),
                let username = SAML.element("saml:NameID", in: xml),
                let signature = SAML.element("ds:SignatureValue", in: xml).flatMap({ Data(base64Encoded: $0) })
            else { return nil }
            var attributes: [String: String] = [:]
            for part in xml.components(separatedBy: "<saml:Attribute ").dropFirst() {
                if let name = SAML.attribute("Name", in: " " + part),
                    let value = SAML.element("saml:AttributeValue", in: part)
                {
                    attributes[name] = value
                }
            }
            self.init(
                id: id, inResponseTo: inResponseTo, destination: destination, audience: audience, username: username,
                attributes: attributes)
            // A simulator: no timing to hide, so a plain comparison.
            guard Data(Digest.hmacSHA256(key: key, Data(signedText.utf8))) == signature else { return nil }
        }
    }

    private static func xml(_ base64: String) -> String? {
        Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap {
            String(data: $0, encoding: .utf8)
        }
    }

    /// The first `name="…"` attribute value in `xml`, unescaped.
    private static func attribute(_ name: String, in xml: String) -> String? {
        guard let start = xml.range(of: " \(name)=\"") else { return nil }
        guard let end = xml[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return HTML.unescape(String(xml[start.upperBound..<end]))
    }

    /// The text of the first `<name>…</name>` element in `xml`, unescaped.
    private static func element(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name)>"),
            let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex)
        else { return nil }
        return HTML.unescape(String(xml[open.upperBound..<close.lowerBound]))
    }
}
