import Foundation

/// The demo university's courses with what they teach: each lecture's title and key terms, from which slides,
/// sheets, notes and code of that course are written (``ContentProfile``), so a search finds search trees in
/// the algorithms course and not in the history course.
enum ContentCatalogue {
    enum Language: Sendable {
        case python, c, java

        var fileExtension: String {
            switch self {
            case .python: "py"
            case .c: "c"
            case .java: "java"
            }
        }
    }

    struct Lecture: Sendable {
        var title: String
        /// Key terms, most important first; slide headings and bullets are built from them.
        var terms: [String]
    }

    struct Course: Sendable {
        var number: String
        var title: String
        var english: Bool
        /// The language of the exercise code, for courses that hand out code.
        var code: Language?
        var literatureAuthor: String
        var lectures: [Lecture]
    }

    /// Lectures as `"Title: term; term; …"`, one a line: compact to read and to extend.
    private static func outline(_ text: String) -> [Lecture] {
        text.split(separator: "\n").map { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            let terms = parts.count > 1 ? parts[1].split(separator: ";") : []
            return Lecture(
                title: parts[0].trimmingCharacters(in: .whitespaces),
                terms: terms.map { $0.trimmingCharacters(in: .whitespaces) })
        }
    }

    static let courses: [Course] = [
        Course(
            number: "INF-101", title: "Einführung in die Informatik", english: false, code: .python,
            literatureAuthor: "Gumm, Sommer",
            lectures: outline(
                """
                Was ist Informatik: Algorithmus; Programm; Rechner; Informatiksysteme; Abstraktion; Modellbildung
                Zahlendarstellung: Binärsystem; Zweierkomplement; Gleitkommazahl; Überlauf; Hexadezimalsystem
                Variablen und Ausdrücke: Variable; Zuweisung; Datentyp; Ausdruck; Operatorrangfolge
                Kontrollstrukturen: Verzweigung; Schleife; Schleifeninvariante; Abbruchbedingung; while-Schleife
                Funktionen: Funktion; Parameter; Rückgabewert; Gültigkeitsbereich; Seiteneffekt
                Rekursion: Rekursion; Rekursionsanker; Fakultät; Fibonacci-Folge; Aufrufstapel
                Listen und Tupel: Liste; Tupel; Index; Slicing; Listenabstraktion
                Suchen und Sortieren: lineare Suche; binäre Suche; Sortieren durch Einfügen; Bubblesort; Laufzeit
                Objektorientierung: Klasse; Objekt; Methode; Konstruktor; Vererbung
                Dateien und Ausnahmen: Datei; Ausnahme; try-except; Eingabevalidierung; Zeichenkodierung
                Testen: Testfall; assert; Grenzfall; Debugger; Spezifikation
                Zusammenfassung: Algorithmus; Rekursion; Objektorientierung; Laufzeit; Klausurvorbereitung
                """)),
        Course(
            number: "INF-120", title: "Algorithmen und Datenstrukturen", english: false, code: .python,
            literatureAuthor: "Cormen et al.",
            lectures: outline(
                """
                Einführung: Algorithmus; Datenstruktur; Korrektheit; Laufzeitanalyse; Pseudocode
                Asymptotische Analyse: O-Notation; Omega-Notation; Theta-Notation; Worst Case; Mastertheorem
                Sortieren: Insertionsort; Mergesort; Quicksort; Pivotelement; untere Schranke für Vergleichssortieren
                Heaps: Binärer Heap; Heapsort; Prioritätswarteschlange; Heap-Eigenschaft; Versickern
                Suchbäume: binärer Suchbaum; Suchbaumeigenschaft; Einfügen; Löschen; Inorder-Traversierung
                Balancierte Suchbäume: AVL-Baum; Balancefaktor; Rotation; Doppelrotation; Rot-Schwarz-Baum
                Hashing: Hashfunktion; Kollision; Verkettung; offene Adressierung; Belegungsfaktor
                Graphen: Adjazenzliste; Adjazenzmatrix; Breitensuche; Tiefensuche; topologische Sortierung
                Kürzeste Wege: Dijkstra-Algorithmus; Bellman-Ford; Relaxation; negative Kanten; Kürzeste-Wege-Baum
                Minimale Spannbäume: Kruskal-Algorithmus; Prim-Algorithmus; Union-Find; Schnitteigenschaft
                Dynamische Programmierung: Teilproblem; Memoisierung; Rucksackproblem; Editierdistanz
                Gierige Algorithmen: Greedy-Strategie; Intervallplanung; Huffman-Kodierung; Austauschargument
                """)),
        Course(
            number: "INF-130", title: "Programmierung in Java", english: false, code: .java,
            literatureAuthor: "Ullenboom",
            lectures: outline(
                """
                Erste Schritte: JDK; Compiler; Bytecode; main-Methode; Java Virtual Machine
                Datentypen: int; double; boolean; String; Typumwandlung
                Kontrollfluss: if-Anweisung; switch-Ausdruck; for-Schleife; while-Schleife; break und continue
                Methoden: Methode; Signatur; Überladen; statische Methode; Rückgabetyp
                Klassen und Objekte: Klasse; Objekt; Konstruktor; Kapselung; Sichtbarkeit
                Vererbung: Unterklasse; Oberklasse; Überschreiben; Polymorphie; abstrakte Klasse
                Interfaces: Interface; Default-Methode; Comparable; Lambda-Ausdruck; funktionales Interface
                Collections: ArrayList; HashMap; Iterator; Generics; equals und hashCode
                Ausnahmen: Exception; try-catch; checked Exception; finally; eigene Ausnahmeklasse
                Streams: Stream-API; filter; map; collect; Optional
                Nebenläufigkeit: Thread; Runnable; synchronized; Deadlock; ExecutorService
                Testen mit JUnit: Unit-Test; JUnit; assertEquals; Testabdeckung; Refactoring
                """)),
        Course(
            number: "INF-210", title: "Datenbanksysteme", english: false, code: .python,
            literatureAuthor: "Kemper, Eickler",
            lectures: outline(
                """
                Einführung: Datenbanksystem; Datenunabhängigkeit; Drei-Ebenen-Architektur; Datenmodell
                Entity-Relationship-Modell: Entität; Beziehung; Kardinalität; Attribut; schwache Entität
                Relationales Modell: Relation; Tupel; Primärschlüssel; Fremdschlüssel; Integritätsbedingung
                Relationale Algebra: Selektion; Projektion; Verbund; Vereinigung; Division
                SQL-Anfragen: SELECT; WHERE; JOIN; GROUP BY; Unteranfrage
                SQL-Datendefinition: CREATE TABLE; Constraint; View; INSERT; UPDATE
                Normalformen: funktionale Abhängigkeit; erste Normalform; dritte Normalform; BCNF; Zerlegung
                Indexstrukturen: B-Baum; B+-Baum; Hashindex; Clustered Index; Sekundärindex
                Anfrageoptimierung: Anfrageplan; Kostenmodell; Join-Reihenfolge; Selektivität
                Transaktionen: ACID; Commit; Rollback; Isolationsstufe; Serialisierbarkeit
                Mehrbenutzersynchronisation: Zwei-Phasen-Sperrprotokoll; Sperre; Deadlock; MVCC
                Recovery: Write-Ahead-Logging; Checkpoint; Redo; Undo; Sicherungspunkt
                """)),
        Course(
            number: "INF-220", title: "Betriebssysteme", english: false, code: .c,
            literatureAuthor: "Tanenbaum",
            lectures: outline(
                """
                Einführung: Betriebssystem; Kernel; Systemaufruf; Benutzermodus; Interrupt
                Prozesse: Prozess; Prozesskontrollblock; fork; exec; Prozesszustand
                Threads: Thread; Kontextwechsel; Benutzer-Threads; Kernel-Threads; pthreads
                Scheduling: Scheduler; Round Robin; Zeitscheibe; Prioritäten; Shortest Job First
                Synchronisation: kritischer Abschnitt; Mutex; Semaphor; Wettlaufsituation; Monitor
                Verklemmungen: Deadlock; Betriebsmittelgraph; Bankiers-Algorithmus; Vermeidung
                Speicherverwaltung: Adressraum; Segmentierung; Fragmentierung; Freispeicherliste
                Virtueller Speicher: Seitentabelle; Seitenfehler; TLB; Seitenersetzung; LRU
                Dateisysteme: Inode; Verzeichnis; Journaling; Blockgröße; Dateideskriptor
                Ein- und Ausgabe: Gerätetreiber; DMA; Puffer; Unterbrechungsbehandlung
                Sicherheit: Zugriffsrechte; Benutzerkennung; Capability; Pufferüberlauf
                Virtualisierung: Hypervisor; virtuelle Maschine; Container; Namespaces
                """)),
        Course(
            number: "MAT-101", title: "Analysis I", english: false, code: nil,
            literatureAuthor: "Forster",
            lectures: outline(
                """
                Mengen und Abbildungen: Menge; Abbildung; injektiv; surjektiv; Umkehrabbildung
                Vollständige Induktion: Induktionsanfang; Induktionsschritt; Induktionsvoraussetzung; Summenformel
                Reelle Zahlen: Körperaxiome; Anordnung; Supremum; Vollständigkeitsaxiom; Betrag
                Folgen: Grenzwert; Konvergenz; Cauchy-Folge; Teilfolge; Satz von Bolzano-Weierstraß
                Reihen: Partialsumme; geometrische Reihe; Majorantenkriterium; Quotientenkriterium; absolute Konvergenz
                Stetigkeit: Epsilon-Delta-Kriterium; Zwischenwertsatz; gleichmäßige Stetigkeit; Extremwertsatz
                Differentiation: Ableitung; Differenzenquotient; Kettenregel; Produktregel; lokale Extrema
                Mittelwertsatz: Satz von Rolle; Mittelwertsatz; Monotonie; Regel von de l'Hospital
                Integration: Riemann-Integral; Stammfunktion; Hauptsatz; partielle Integration; Substitution
                Taylorreihen: Taylorpolynom; Restglied; Potenzreihe; Konvergenzradius; Exponentialfunktion
                """)),
        Course(
            number: "MAT-105", title: "Lineare Algebra I", english: false, code: nil,
            literatureAuthor: "Fischer",
            lectures: outline(
                """
                Lineare Gleichungssysteme: Gauß-Algorithmus; Zeilenstufenform; Lösungsmenge; homogenes System
                Gruppen und Körper: Gruppe; Körper; neutrales Element; inverses Element; Restklassen
                Vektorräume: Vektorraum; Untervektorraum; Linearkombination; Erzeugendensystem
                Basis und Dimension: lineare Unabhängigkeit; Basis; Dimension; Austauschsatz; Koordinaten
                Lineare Abbildungen: lineare Abbildung; Kern; Bild; Dimensionsformel; Isomorphismus
                Matrizen: Matrix; Matrixprodukt; Rang; inverse Matrix; Basiswechsel
                Determinanten: Determinante; Leibniz-Formel; Laplace-Entwicklung; Cramersche Regel
                Eigenwerte: Eigenwert; Eigenvektor; charakteristisches Polynom; Eigenraum
                Diagonalisierung: diagonalisierbar; algebraische Vielfachheit; geometrische Vielfachheit; Ähnlichkeit
                Skalarprodukte: Skalarprodukt; Norm; Orthogonalität; Gram-Schmidt-Verfahren; Orthonormalbasis
                """)),
        Course(
            number: "MATH-220", title: "Probability Theory", english: true, code: nil,
            literatureAuthor: "Durrett",
            lectures: outline(
                """
                Probability Spaces: sample space; event; sigma-algebra; probability measure; Kolmogorov axioms
                Conditional Probability: conditional probability; Bayes' theorem; independence; law of total probability
                Random Variables: random variable; distribution function; discrete distribution; density
                Expectation: expectation; variance; linearity of expectation; moments; Jensen's inequality
                Common Distributions: binomial distribution; Poisson distribution; normal distribution; exponential distribution
                Joint Distributions: joint density; marginal distribution; covariance; correlation
                Inequalities: Markov's inequality; Chebyshev's inequality; Chernoff bound; tail estimate
                Law of Large Numbers: weak law; strong law; convergence in probability; almost sure convergence
                Central Limit Theorem: characteristic function; convergence in distribution; standard normal; de Moivre-Laplace
                Markov Chains: transition matrix; stationary distribution; irreducibility; random walk
                """)),
        Course(
            number: "PHY-101", title: "Experimentalphysik I", english: false, code: nil,
            literatureAuthor: "Demtröder",
            lectures: outline(
                """
                Kinematik: Ort; Geschwindigkeit; Beschleunigung; gleichförmige Bewegung; schiefer Wurf
                Newtonsche Axiome: Trägheitsprinzip; Kraft; Masse; Actio gleich Reactio; Reibung
                Arbeit und Energie: Arbeit; kinetische Energie; potentielle Energie; Energieerhaltung; Leistung
                Impuls: Impuls; Impulserhaltung; elastischer Stoß; inelastischer Stoß; Schwerpunkt
                Drehbewegung: Drehmoment; Trägheitsmoment; Drehimpuls; Satz von Steiner; Kreisel
                Gravitation: Gravitationsgesetz; Keplersche Gesetze; Fluchtgeschwindigkeit; Gravitationsfeld
                Schwingungen: harmonischer Oszillator; Federpendel; Dämpfung; Resonanz; Eigenfrequenz
                Wellen: Wellenlänge; Frequenz; Interferenz; stehende Welle; Doppler-Effekt
                Hydrostatik: Druck; Auftrieb; Archimedisches Prinzip; Oberflächenspannung
                Wärmelehre: Temperatur; Wärmekapazität; ideales Gas; Hauptsätze der Thermodynamik; Entropie
                """)),
        Course(
            number: "ECON-101", title: "Principles of Microeconomics", english: true, code: nil,
            literatureAuthor: "Mankiw",
            lectures: outline(
                """
                Thinking Like an Economist: scarcity; opportunity cost; marginal analysis; incentives; trade-offs
                Supply and Demand: demand curve; supply curve; market equilibrium; shortage; surplus
                Elasticity: price elasticity of demand; income elasticity; cross-price elasticity; total revenue
                Consumer Choice: budget constraint; indifference curve; marginal utility; substitution effect
                Production and Costs: production function; marginal cost; average total cost; economies of scale
                Perfect Competition: price taker; zero economic profit; long-run equilibrium; shutdown decision
                Monopoly: market power; deadweight loss; price discrimination; barriers to entry
                Oligopoly and Game Theory: oligopoly; Nash equilibrium; prisoners' dilemma; cartel
                Externalities: negative externality; Pigouvian tax; Coase theorem; tradable permits
                Public Goods: public good; free rider; common resource; tragedy of the commons
                """)),
        Course(
            number: "GES-201", title: "Geschichte der Weimarer Republik", english: false, code: nil,
            literatureAuthor: "Winkler",
            lectures: outline(
                """
                Einführung und Quellenkritik: Quellenkritik; Forschungsstand; Periodisierung; Zeitzeugen
                Novemberrevolution 1918: Novemberrevolution; Matrosenaufstand; Rat der Volksbeauftragten; Ausrufung der Republik
                Die Weimarer Verfassung: Nationalversammlung; Reichspräsident; Artikel 48; Verhältniswahlrecht
                Versailler Vertrag: Versailler Vertrag; Kriegsschuldartikel; Reparationen; Dolchstoßlegende
                Krisenjahr 1923: Ruhrbesetzung; Hyperinflation; Hitlerputsch; Rentenmark
                Die Goldenen Zwanziger: Stresemann; Dawes-Plan; Locarno-Verträge; Völkerbund
                Kultur der Weimarer Zeit: Bauhaus; Neue Sachlichkeit; Kino; Berliner Moderne
                Parteien und Wahlen: SPD; Zentrum; DNVP; KPD; NSDAP
                Weltwirtschaftskrise: Weltwirtschaftskrise; Massenarbeitslosigkeit; Brüning; Notverordnungen
                Das Ende der Republik: Präsidialkabinette; Papen; Schleicher; 30. Januar 1933
                """)),
    ]

    /// The catalogue entry for a course number, if the demo teaches it.
    static func index(of number: String) -> Int? {
        courses.firstIndex { $0.number == number }
    }
}
