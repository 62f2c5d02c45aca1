import Foundation
import StudIPWire

/// The login pages' scanner (`HTMLPage`) on any bytes: it never crashes, keeps its text bounds, and reads the
/// forms, links and message kinds it found back unchanged from a page that writes them out plainly — so whatever
/// it reports is what a form would send, not an artefact of its own quoting or entity decoding.
enum HTMLTarget {
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        let page = HTMLPage(Data(bytes))
        for text in page.links.map(\.text) + page.messages.map(\.text) + page.forms.flatMap(\.buttons).map(\.text) {
            // Each element keeps 2,000 bytes of raw text; an invalid byte decodes to U+FFFD, three bytes.
            precondition(text.utf8.count <= 6000, "text beyond the bound")
        }
        for form in page.forms {
            precondition(form.method == form.method.lowercased(), "method not lowercased")
            for input in form.inputs {
                precondition(input.type == input.type.lowercased(), "input type not lowercased")
                precondition(input.type != "submit" && input.type != "image", "a submit input among the inputs")
            }
        }
        let again = HTMLPage(render(page))
        precondition(again.forms.map(\.shape) == page.forms.map(\.shape), "forms differ after writing them out")
        precondition(again.links.map(\.href) == page.links.map(\.href), "links differ after writing them out")
        precondition(again.messages.map(\.kind) == page.messages.map(\.kind), "message kinds differ")
    }

    /// The page written out plainly: every attribute double-quoted and escaped.
    static func render(_ page: HTMLPage) -> String {
        var html = ""
        for form in page.forms {
            html += "<form" + attribute("name", form.name) + attribute("action", form.action)
            html += attribute("method", form.method) + ">"
            for input in form.inputs {
                html += "<input" + attribute("type", input.type) + attribute("name", input.name)
                html +=
                    attribute("id", input.id) + attribute("value", input.value) + (input.checked ? " checked>" : ">")
            }
            for button in form.buttons {
                html += "<button" + attribute("name", button.name) + attribute("value", button.value) + ">"
                html += escape(button.text) + "</button>"
            }
            html += "</form>"
        }
        for link in page.links { html += "<a" + attribute("href", link.href) + ">" + escape(link.text) + "</a>" }
        for message in page.messages {
            html += "<div" + attribute("class", "messagebox_" + message.kind) + ">" + escape(message.text) + "</div>"
        }
        return html
    }

    private static func attribute(_ name: String, _ value: String?) -> String {
        value.map { " \(name)=\"\(escape($0))\"" } ?? ""
    }

    /// Scalar by scalar: a `"` followed by a combining mark is one Character, which `replacing` would miss.
    private static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "\"": escaped += "&quot;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension HTMLForm {
    /// What the form sends and where, without the buttons' text (collapsed differently by nothing that matters).
    fileprivate var shape: [String] {
        [name ?? "<nil>", action ?? "<nil>", method]
            + inputs.map { "\($0.type)|\($0.name ?? "<nil>")|\($0.id ?? "<nil>")|\($0.value)|\($0.checked)" }
            + buttons.map { "\($0.name ?? "<nil>")|\($0.value)" }
    }
}
