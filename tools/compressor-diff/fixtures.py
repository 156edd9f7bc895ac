"""Fixtures of the compressor differential: the five two-hop questions of tools/flashrag-diff, each with a
fixed list of five retrieved documents (what the /retrieve server returns for it, best first). The texts
are written for this check: several sentences each, with what the compressors' sentence splitters must
handle (initialisms such as "J. K." and "U.S.", abbreviations such as "Mr." and "Dr.", a decimal number,
a question mark inside a text, a parenthesis, non-ASCII letters). q3's documents are short (about one of
LongLLMLingua's 200-token windows: in FlashRAG's lines 199 document tokens, 227 with the question, just over
the first window's 220); the others' are longer than two windows."""

import importlib.util as _iu
import os as _os

# The questions are the FlashRAG differential's own (one list for both checks).
_spec = _iu.spec_from_file_location("_flashrag_diff_fixtures", _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", "flashrag-diff", "fixtures", "fixtures.py"))
_fd = _iu.module_from_spec(_spec)
_spec.loader.exec_module(_fd)
QUESTIONS = _fd.QUESTIONS

# id -> (title, text)
CORPUS = {
    "p01": ("Jaws (film)", "Jaws is a 1975 American thriller film directed by Steven Spielberg and based on the 1974 novel by Peter Benchley. "
            "It stars Roy Scheider as police chief Martin Brody, who hunts a man-eating great white shark with the help of a marine biologist and a professional shark hunter. "
            "The film was shot on Martha's Vineyard in Massachusetts and was the highest-grossing film in the U.S. until the release of Star Wars in 1977."),
    "p02": ("Steven Spielberg", "Steven Allan Spielberg (born December 18, 1946) is an American film director, producer and screenwriter. "
            "He is one of the founders of New Hollywood and one of the most commercially successful directors in history. "
            "Spielberg was born in Cincinnati, Ohio, and grew up in Phoenix, Arizona, where he made amateur films as a teenager."),
    "p11": ("Jaws 2", "Jaws 2 is a 1978 American thriller film directed by Jeannot Szwarc. "
            "It is the first sequel to Spielberg's Jaws and the second installment in the Jaws franchise. "
            "Roy Scheider reprises his role as Chief Brody, who suspects that another great white shark is terrorizing the town of Amity."),
    "p13": ("Peter Benchley", "Peter Bradford Benchley (May 8, 1940 – February 11, 2006) was an American author and screenwriter. "
            "He is best known for his novel Jaws, which he co-adapted with Carl Gottlieb into the film. "
            "Did he regret the fear of sharks the book caused? In later years he worked for the protection of the oceans."),
    "p16": ("Universal Pictures", "Universal Pictures is an American film production and distribution company owned by Comcast. "
            "Founded in 1912 by Carl Laemmle, Mark Dintenfass and others, it is the oldest surviving film studio in the U.S. "
            "Universal released Jaws in June 1975, and the film earned about $470.7 million worldwide."),

    "p03": ("Taj Mahal", "The Taj Mahal is an ivory-white marble mausoleum on the right bank of the river Yamuna in Agra, India. "
            "It was commissioned in 1631 by the fifth Mughal emperor, Shah Jahan, to house the tomb of his favourite wife, Mumtaz Mahal. "
            "The complex is set in and around a large garden and is a UNESCO World Heritage Site."),
    "p04": ("New Delhi", "New Delhi is the capital of India and a part of the National Capital Territory of Delhi. "
            "It is the seat of all three branches of the Government of India, hosting the Rashtrapati Bhavan, Parliament House and the Supreme Court. "
            "The foundation stone of the city was laid by George V in 1911."),
    "p12": ("Agra", "Agra is a city on the banks of the Yamuna river in the Indian state of Uttar Pradesh, about 230 km south-east of New Delhi. "
            "With a population of roughly 1.6 million, it is the fourth-most populous city in Uttar Pradesh. "
            "Agra was the capital of the Mughal Empire under several emperors."),
    "p17": ("Mughal architecture", "Mughal architecture is the style of architecture developed by the Mughals in the 16th, 17th and 18th centuries. "
            "It is a blend of Indo-Islamic and Persian styles. "
            "Its best-known example is the Taj Mahal, whose design was led by Ustad Ahmad Lahauri."),
    "p18": ("India", "India, officially the Republic of India, is a country in South Asia. "
            "It is the seventh-largest country by area and the most populous country since 2023. "
            "Its capital is New Delhi, and its largest city is Mumbai."),

    "p05": ("Harry Potter", "Harry Potter is a series of seven fantasy novels written by the British author J. K. Rowling."),
    "p06": ("J. K. Rowling", "Rowling married the anaesthetist Dr. Neil Murray in 2001."),
    "p19": ("Neil Murray", "Neil Murray is a Scottish doctor."),
    "p20": ("Bloomsbury", "Bloomsbury published it in 1997."),
    "p21": ("Hogwarts", "Hogwarts is a school."),

    "p07": ("Wolfgang Amadeus Mozart", "Wolfgang Amadeus Mozart (27 January 1756 – 5 December 1791) was a prolific and influential composer of the Classical period. "
            "He was born in Salzburg, then the capital of a sovereign archbishopric of the Holy Roman Empire. "
            "Mozart composed more than 800 works, and he showed prodigious ability from his earliest childhood."),
    "p08": ("Salzburg", "Salzburg is the fourth-largest city in Austria. "
            "The town lies on both banks of the Salzach river, at the northern boundary of the Alps. "
            "Its Old Town, with its Baroque architecture, is one of the best-preserved city centres north of the Alps."),
    "p14": ("Salzach", "The Salzach is a river in Austria and Germany, a right tributary of the Inn. "
            "It is about 225 km long and flows through the city of Salzburg. "
            "For 59 km it forms the border between Austria and Bavaria."),
    "p15": ("Don Giovanni", "Don Giovanni is an opera in two acts with music by Mozart and a libretto by Lorenzo Da Ponte. "
            "It premiered in Prague on 29 October 1787. "
            "Mr. Da Ponte also wrote the librettos of The Marriage of Figaro and Così fan tutte."),
    "p22": ("Leopold Mozart", "Leopold Mozart was a German composer, violinist and music teacher, and the father of Wolfgang. "
            "He is best known today for his violin textbook, published in 1756 in Augsburg. "
            "He moved to Salzburg in 1737 and worked for the court of the Prince-Archbishop."),

    "p09": ("Carmen", "Carmen is an opera in four acts by the French composer Georges Bizet. "
            "The libretto was written by Henri Meilhac and Ludovic Halévy, based on a novella by Prosper Mérimée. "
            "The opera was first performed by the Opéra-Comique in Paris on 3 March 1875."),
    "p10": ("Georges Bizet", "Georges Bizet (25 October 1838 – 3 June 1875) was a French composer of the Romantic era. "
            "Best known for his operas in a career cut short by his early death, Bizet achieved few successes before his final work, Carmen. "
            "He studied at the Conservatoire de Paris, where he won the Prix de Rome in 1857."),
    "p23": ("Opéra-Comique", "The Opéra-Comique is a Paris opera company founded around 1714. "
            "Its theatre, the Salle Favart, is near the Opéra Garnier. "
            "Many famous operas had their premieres there, among them Carmen and Lakmé."),
    "p24": ("Prosper Mérimée", "Prosper Mérimée was a French writer of the Romantic movement and a pioneer of the novella. "
            "His novella Carmen, published in 1845, became the basis of Bizet's opera. "
            "He was also an archaeologist and historian and served as Inspector-General of Historical Monuments."),
    "p25": ("Habanera", "The Habanera is the popular name of the aria L'amour est un oiseau rebelle from Carmen. "
            "It is sung by the title character on her first entrance, in Act 1. "
            "Its melody is adapted from El Arreglito, a song by the Spanish composer Sebastián Iradier."),
}

RETRIEVED = {
    "q1": ["p01", "p11", "p02", "p13", "p16"],
    "q2": ["p03", "p12", "p17", "p04", "p18"],
    "q3": ["p05", "p20", "p21", "p06", "p19"],
    "q4": ["p07", "p15", "p22", "p08", "p14"],
    "q5": ["p09", "p25", "p23", "p24", "p10"],
}


def docs_for(qid):
    """The retrieved documents of a question, as a /retrieve server returns them (FlashRAG's `contents`:
    a quoted title line, then the text), best first."""
    out = []
    for rank, pid in enumerate(RETRIEVED[qid]):
        title, text = CORPUS[pid]
        out.append({"id": pid, "title": title, "text": text, "contents": f'"{title}"\n{text}', "score": round(1.0 - rank / 10, 2)})
    return out


def find_question(query):
    q = " ".join(query.split()).lower()
    for item in QUESTIONS:
        if item["question"].lower() in q or q in item["question"].lower():
            return item
    return None


def tokenizer_texts():
    """What the tiny model's BPE is trained on: every title, text and question, in a fixed order."""
    texts = [f"{t}\n{x}" for t, x in CORPUS.values()]
    texts += [q["question"] for q in QUESTIONS]
    return texts


# Probes beyond the documents (not among the tokenizer's training texts, so rare characters are split into
# byte tokens): sentence splitting (ragtrail's scSentences against the reference's pattern) and token
# placement (ragtrail's scoreText through serve_lm).
SPLIT_PROBES = [
    "Il vit aux É.U. depuis 1990. Fin.",                       # a non-ASCII initialism (B4)
    "Er lebt seit 1990 in der Č.R. mit Frau Nováková. Dann nicht.",  # the same, in a longer sentence
    "Author J. K. Rowling lives in the U.S. with Mr. Murray. Did she? Yes.",
    "Peter Benchley (1940 – 2006) wrote Jaws. Dr. Brody hunts sharks.",
]
ALIGN_PROBES = [
    "Peter Benchley (May 8, 1940 – February 11, 2006) was an American author.",  # a character split over byte tokens (B1)
    "Prosper Mérimée wrote Carmen in 1845, and Bizet set it in 1875.",
    "Jaws 🦈 was shot on Martha's Vineyard in 1974 by Steven Spielberg.",       # a character outside the BMP: two UTF-16 units
    "The film 𝔍aws was shot in 1975 by Spielberg.",
]
