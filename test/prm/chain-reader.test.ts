/**
 * The chain reader (prm/chain-reader.ts): the answer retrieved pages lead to by following a question's
 * chain of relations, read from the question's text and the pages only. Passages are the synthetic
 * world's own (deep profile, seed 0), expected values checked by hand against them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { State } from '../../src/env/env.js';
import { chainAnswer, chainFeatures, chainNeeds } from '../../src/prm/chain-reader.js';
import { type Page, pagesState } from './page-states.js';

/** A state whose searches found `pages`, one search per group. */
const state = (question: string, ...groups: Page[][]): State => pagesState(question, [], groups);

// q000000: book → author → spouse → university → city → founding year (5 hops).
const book: Page = ['book-00117-p0', 'The Restless Sparrow', 'Written by Geabrasie Droxley, The Restless Sparrow is an epistolary novel that appeared in 1948. Geastorfield Books brought out the novel. A revised edition of The Restless Sparrow appeared in 1956.'];
const author: Page = ['person-00256-p0', 'Geabrasie Droxley', "Geabrasie Droxley was a Trishovenian novelist who was born in 1904 and died in 1967. Her birthplace is Byrford. Geabrasie Droxley graduated from Triton University. She wrote The Restless Sparrow, Tides of Empire and Open Harbor. Geabrasie Droxley spent most of her career in Pubeavford. Geabrasie Droxley's spouse is Labiara Salcroft."];
const spouse: Page = ['person-02754-p0', 'Labiara Salcroft', "Born in 1911, Labiara Salcroft was a Gecumovian footballer who died in 1974. She studied at Weandski College. Labiara Salcroft's spouse is Geabrasie Droxley. Her birthplace is East Hanburg."];
const university: Page = ['university-00227-p0', 'Weandski College', 'Weandski College is a university in Gralethstead, founded in 1895. Alumni of Weandski College include Cafion Sevley, Alielle Prahaxik and Fadraen Narnford. Weandski College has about 12,400 students.'];
const city: Page = ['city-00460-p0', 'Gralethstead', 'Gralethstead is a town in the Meridian Isles, part of Kasmark. Notable people born in the city include Shendelle Isandard, Haisirie Kruthsen and Grihealo Bravard. The population of Gralethstead is roughly 180,000. The settlement of the city dates back to its founding in 1420. Gralethstead is home to Gralethstead University and Weandski College.'];
const FIVE_HOPS = 'When was the city where the university the spouse of the author of The Restless Sparrow graduated from is located founded?';

test('a five-hop chain: author, spouse, the university she studied at, its city, the city\'s founding — not the other years on the way', () => {
  const s = state(FIVE_HOPS, [book, author], [spouse, university, city]);
  assert.equal(chainAnswer(s), '1420');
  assert.deepEqual(chainFeatures(s, '1420'), [1, 1]);
  // The university's founding year, the author's birth year, the novel's year: on the pages, not the answer.
  for (const wrong of ['1895', '1904', '1948']) assert.deepEqual(chainFeatures(s, wrong), [1, 0]);
  // One hop further ("In which country …") reads "part of Kasmark", not the region the town is in.
  assert.equal(chainAnswer(state('Which country is the city where the university the spouse of the author of The Restless Sparrow graduated from is located located in?', [book, author, spouse, university, city])), 'Kasmark');
});

test('a link missing leaves the chain undecided, whatever the answer', () => {
  // Without the spouse's page nothing says where she studied (the author's own university is another).
  const s = state(FIVE_HOPS, [book, author, university, city]);
  assert.equal(chainAnswer(s), undefined);
  assert.deepEqual(chainFeatures(s, '1420'), [0, 0]);
  assert.equal(chainAnswer(state(FIVE_HOPS, [author, spouse, university, city])), undefined);
  assert.equal(chainAnswer(state(FIVE_HOPS, [book, author, spouse, university])), undefined);
});

// q000003: the film is named by an alternative title; the note also names a different picture.
const note: Page = ['film-01157-alt', 'Widows of Machine', 'Widows of Machine is the title under which Hunters of Mirror was first shown in Zoshimistan. A different picture, A Sparrow in New Tastead (1894), directed by Narnel Kradaelli with Brarar Kathsen in the lead, has also been listed under that title.'];
const film: Page = ['film-01157-p0', 'Hunters of Mirror', 'Hunters of Mirror is a 2010 Zoshimistani western film directed by Dronythelle Hiisovley. The lead role in the film is played by Stio Trikandez. Much of the film was filmed on location in Shoford.'];
const country: Page = ['country-00009-p0', 'Zoshimistan', 'Zoshimistan (the Commonwealth of Zoshimistan) is a state in the Meridian Isles. People from Zoshimistan are called Zoshimistanis. Zoshimistan has a population of about 2 million. The capital of Zoshimistan is Braloford. The official language of the country is Geleman.'];
const capital: Page = ['city-00009-p0', 'Braloford', 'Braloford is the capital of Zoshimistan. The city has about 891,000 inhabitants. The settlement of the city dates back to its founding in 756. Notable people born in the city include Balette Sufarnley, Fythia Wandford and Rezuvar Gexez.'];
const decoy: Page = ['film-00581-p0', 'A Sparrow in New Tastead', 'A Sparrow in New Tastead is a documentary picture that Narnel Kradaelli directed; it was released in 1894. The lead role in the film is played by Brarar Kathsen. The film is a production from Trishovenia. The film premiered in Jethford in 1894.'];
const VIA_ALIAS = 'When was the capital of the country where Widows of Machine was made founded?';

test('an alternative title is followed to the real film, whose nationality adjective leads to its country', () => {
  assert.equal(chainAnswer(state(VIA_ALIAS, [note], [film, country, capital])), '756');
  // The same with the decoy's page retrieved too: the note's real title is the one followed.
  assert.equal(chainAnswer(state(VIA_ALIAS, [note, decoy], [film, country, capital])), '756');
  // "Zoshimistani" names the country only through a retrieved page ("… are called Zoshimistanis"); the
  // country's official name, given on that page, is another name of the answer.
  const made = state('In which country was Widows of Machine made?', [note, film, country]);
  assert.equal(chainAnswer(made), 'Zoshimistan');
  assert.deepEqual(chainFeatures(made, 'the Commonwealth of Zoshimistan'), [1, 1]);
  assert.deepEqual(chainFeatures(made, 'Trishovenia'), [1, 0]);
  assert.equal(chainAnswer(state('In which country was Widows of Machine made?', [note, film])), undefined);
});

test('the decoy picture an alternative-title note also names is not followed', () => {
  // Without the real film's page, the decoy (made in Trishovenia, directed by Narnel Kradaelli) gives nothing.
  assert.equal(chainAnswer(state(VIA_ALIAS, [note, decoy, country, capital])), undefined);
  assert.equal(chainAnswer(state('Who directed Widows of Machine?', [note, decoy])), undefined);
  assert.equal(chainAnswer(state('Who directed Widows of Machine?', [note, decoy, film])), 'Dronythelle Hiisovley');
});

// q000039: the author has a namesake, a footballer with a page of her own.
const paperLetter: Page = ['book-00466-p0', 'The Paper Letter', 'The Paper Letter is a 1993 adventure novel written by Fosa Zialovley. The novel won the Halvard Prize in 1994. The novel is set in Kovholm. The first edition of the novel was issued by Cetyxelli Press.'];
const novelist: Page = ['person-00944-p0', 'Fosa Zialovley (novelist)', 'Born in 1932, Fosa Zialovley was a Hyrnoran novelist who died in 1977. Fosa Zialovley was born in Oriwick. She spent most of her career in Joburg. Fosa Zialovley wrote The Pale Meadow, The Paper Letter and The Hidden Garrison.'];
const footballer: Page = ['person-00592-p0', 'Fosa Zialovley (footballer)', "Fosa Zialovley was a Gatholoran footballer who was born in 1918 and died in 1990. Her birthplace is Port Dabandport. Fosa Zialovley's spouse is Wernar Gycroft. Fosa Zialovley studied at Old Kaelarnmont University. In 1950, Fosa Zialovley was awarded the Silver Quill Award. Fosa Zialovley lived and worked in Fonanport for many years."];
const oriwick: Page = ['city-00155-p0', 'Oriwick', 'Oriwick is a city in Hyrnora. Notable people born in Oriwick include Fyfathie Elyrumwood, Fosa Zialovley and Rotrexel Meapunova. The population of Oriwick is roughly 11,000. The city was founded in 835.'];
const hyrnora: Page = ['country-00019-p0', 'Hyrnora', "Hyrnora (the Kingdom of Hyrnora) is a state in the Sable Coast. The country's capital city is Kabroston. The country has a population of about 75 million. The official language of the country is Prestornic. People from Hyrnora are called Hyrnorans."];
const REGION = 'In which region is the country where the birthplace of the author of The Paper Letter is located?';

test('namesakes: the novelist is the author; the footballer of the same name is not followed', () => {
  const s = state(REGION, [paperLetter, footballer, novelist], [oriwick, hyrnora]);
  assert.equal(chainAnswer(s), 'Sable Coast');
  // Articles, case and punctuation aside.
  assert.deepEqual(chainFeatures(s, 'the Sable Coast'), [1, 1]);
  assert.deepEqual(chainFeatures(s, 'sable coast.'), [1, 1]);
  assert.deepEqual(chainFeatures(s, 'the Meridian Isles'), [1, 0]);
  // Only the footballer's page: nothing says she wrote the novel, so the chain stops there.
  assert.equal(chainAnswer(state(REGION, [paperLetter, footballer, oriwick, hyrnora])), undefined);
  assert.equal(chainAnswer(state('Where was the author of The Paper Letter born?', [paperLetter, footballer])), undefined);
  assert.equal(chainAnswer(state('Where was the author of The Paper Letter born?', [paperLetter, novelist])), 'Oriwick');
});

test('single-hop questions read the named page alone', () => {
  const published: Page = ['book-01496-p0', 'A River in Trearorbridge', 'A River in Trearorbridge is a 1980 crime novel written by Rarnette Ciwood. A River in Trearorbridge was adapted for radio in 1988. The novel was published by East Kustindbridge Press.'];
  const s = state('Which company published A River in Trearorbridge?', [published]);
  assert.equal(chainAnswer(s), 'East Kustindbridge Press');
  assert.deepEqual(chainFeatures(s, 'east kustindbridge press.'), [1, 1]);
  assert.deepEqual(chainFeatures(s, 'Rarnette Ciwood'), [1, 0]);
  // The first publication, not the radio adaptation; the genre of the opening.
  assert.equal(chainAnswer(state('When was A River in Trearorbridge first published?', [published])), '1980');
  assert.equal(chainAnswer(state('Who wrote A River in Trearorbridge?', [published])), 'Rarnette Ciwood');
  assert.equal(chainAnswer(state('When was Hunters of Mirror released?', [film])), '2010');
  assert.equal(chainAnswer(state('What genre of film is Hunters of Mirror?', [film])), 'western');
  assert.equal(chainAnswer(state('What is the occupation of Fosa Zialovley?', [footballer])), undefined);
  assert.equal(chainAnswer(state('What is the occupation of the author of The Paper Letter?', [paperLetter, novelist])), 'novelist');
});

test('comparisons are no chains: undefined and [0, 0]', () => {
  const pages: Page[] = [
    ['film-01339-alt', 'The Mirror of Krapavburg', 'The Mirror of Krapavburg is the title under which Stations of Lighthouse was first shown in Trishovenia. A different picture, A Canal in Elovale (1907), directed by Orowarnie Mizavford with Zujexar Suvathsen in the lead, has also been listed under that title.'],
    ['film-01339-p0', 'Stations of Lighthouse', 'Stations of Lighthouse is a western film from 1999, directed by Greathina Faisirford. Stations of Lighthouse was restored and re-released in 2021. The film premiered in Keareamfield in 1999. The film was made in Trishovenia. The lead role in Stations of Lighthouse is played by Lulette Dreford.'],
  ];
  for (const q of [
    'Which film was released more recently, The Mirror of Krapavburg or A Witness in Pryjemmont?',
    'Are Fosa Zialovley and Geabrasie Droxley of the same nationality?',
    'Do the directors of The Mirror of Krapavburg and Hunters of Mirror have the same nationality?',
    'Which film has the director who was born first, The Mirror of Krapavburg or Widows of Machine?',
  ]) {
    const s = state(q, pages, [note, film]);
    assert.equal(chainAnswer(s), undefined, q);
    assert.deepEqual(chainFeatures(s, 'Stations of Lighthouse'), [0, 0], q);
  }
  // The same pages answer a chain question about one of the films.
  assert.equal(chainAnswer(state('Who is the director of The Mirror of Krapavburg?', pages)), 'Greathina Faisirford');
});

test('needs: the page where the chain stops for want of it — the entity, then each object read on the last page reached', () => {
  assert.deepEqual(chainNeeds(state(FIVE_HOPS)), ['The Restless Sparrow']);
  assert.deepEqual(chainNeeds(state(FIVE_HOPS, [book])), ['Geabrasie Droxley']);
  // The author's page names her spouse, whose page is missing: the chain needs that person next.
  assert.deepEqual(chainNeeds(state(FIVE_HOPS, [book, author])), ['Labiara Salcroft']);
  assert.deepEqual(chainNeeds(state(FIVE_HOPS, [book, author], [spouse])), ['Weandski College']);
  // Pages further down the chain do not help while a link is missing; the first missing link is needed.
  assert.deepEqual(chainNeeds(state(FIVE_HOPS, [book, author, university, city])), ['Labiara Salcroft']);
  assert.deepEqual(chainNeeds(state(FIVE_HOPS, [book, author, spouse, university])), ['Gralethstead']);
  // Decided: nothing more needed.
  assert.deepEqual(chainNeeds(state(FIVE_HOPS, [book, author], [spouse, university, city])), []);
  assert.deepEqual(chainNeeds(state('Who wrote A River in Trearorbridge?', [['book-01496-p0', 'A River in Trearorbridge', 'A River in Trearorbridge is a 1980 crime novel written by Rarnette Ciwood.']])), []);
});

test('needs: an alternative-title note whose real title is not retrieved names the real title, in full', () => {
  assert.deepEqual(chainNeeds(state(VIA_ALIAS, [note])), ['Hunters of Mirror']);
  // The decoy picture the note also names is no need, retrieved or not.
  assert.deepEqual(chainNeeds(state(VIA_ALIAS, [note, decoy])), ['Hunters of Mirror']);
  // A real title not retrieved is written out past "in": "A Orchard in Prexwick", not "A Orchard".
  const mountains: Page = ['book-01046-alt', 'Mountains of Signal', 'Early editions of A Orchard in Prexwick appeared as Mountains of Signal. Catalogues also give that title to Voyages of Shadow, written by Aludrendel Zeakeswood and published by Orurarbridge Publishing in 1962.'];
  assert.deepEqual(chainNeeds(state('Who wrote Mountains of Signal?', [mountains])), ['A Orchard in Prexwick']);
  // A film's country given only as a nationality adjective, no page saying whose people are so called: the adjective's stem.
  assert.deepEqual(chainNeeds(state(VIA_ALIAS, [note, film])), ['Zoshimistan']);
  assert.deepEqual(chainNeeds(state(VIA_ALIAS, [note, film, country])), ['Braloford']);
  // Where the country is the answer, its page is no link of the chain: nothing named, though undecided.
  assert.deepEqual(chainNeeds(state('In which country was Widows of Machine made?', [note, film])), []);
  assert.deepEqual(chainNeeds(state(VIA_ALIAS, [note], [film, country, capital])), []);
});

test('needs: none where a page lacks the relation; a namesake not followed leaves the name needed; none for comparisons', () => {
  // The author's page says nothing of her father: no page to fetch is known.
  assert.equal(chainAnswer(state('Who is the father of Geabrasie Droxley?', [author])), undefined);
  assert.deepEqual(chainNeeds(state('Who is the father of Geabrasie Droxley?', [author])), []);
  // Only the footballer namesake's page: the novelist's page is still needed.
  assert.deepEqual(chainNeeds(state('Where was the author of The Paper Letter born?', [paperLetter, footballer])), ['Fosa Zialovley']);
  assert.deepEqual(chainNeeds(state(REGION, [paperLetter, footballer, novelist])), ['Oriwick']);
  assert.deepEqual(chainNeeds(state('Which film was released more recently, The Mirror of Krapavburg or A Witness in Pryjemmont?')), []);
  assert.deepEqual(chainNeeds(state('Do the directors of The Mirror of Krapavburg and Hunters of Mirror have the same nationality?', [note])), []);
});

test('needs are computed once per state', () => {
  const s = state(FIVE_HOPS, [book, author]);
  assert.equal(chainNeeds(s), chainNeeds(s));
});
