/**
 * The comparison view (prm/comparison.ts): each option's year read from the retrieved pages only, for
 * plain comparisons, bridge comparisons through a role-holder, and alternative titles; and the yes/no
 * "same nationality / same country" comparisons. Passages are the synthetic world's own (seed 0),
 * values checked by hand against them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { State } from '../../src/env/env.js';
import { comparisonFeatures, comparisonNeeds, comparisonView, sameComparisonFeatures, sameComparisonView } from '../../src/prm/comparison.js';
import { type Page, pagesState } from './page-states.js';

/** A state whose searches found `pages`, one search per group. */
const state = (question: string, answers: string[], ...groups: Page[][]): State => pagesState(question, answers, groups);

// Plain, with a birth sentence that also gives a death ("Born in 1890, … who died in 1943").
const elixelle: Page = ['person-00583-p0', 'Elixelle Bagromski', 'Elixelle Bagromski was a Drobyistani painter who was born in 1915 and died in 1981. Her spouse is Kazemel Huik. Elixelle Bagromski lived and worked in Covton for many years. Elixelle Bagromski is a native of Alolport. Elixelle Bagromski gave a celebrated lecture series at Fynane University. Elixelle Bagromski graduated from Shyfindik College.'];
const alira: Page = ['person-02667-p0', 'Alira Veford', 'Born in 1890, Alira Veford was an Alastathmarker politician who died in 1943. She graduated from Isabrernwick University. She spent most of her career in Saint Elimere. Her birthplace is Trearoxvale. Alira Veford is married to Bexis Stevski.'];

test('plain comparison: each person\'s birth year from their own page; the older wins', () => {
  const s = state('Who is older, Elixelle Bagromski or Alira Veford?', ['Alira Veford'], [elixelle], [alira]);
  assert.deepEqual(comparisonView(s), { options: ['Elixelle Bagromski', 'Alira Veford'], wantSmaller: true, values: [1915, 1890] });
  assert.deepEqual(comparisonFeatures(s, 'Alira Veford'), [1, 1]);
  assert.deepEqual(comparisonFeatures(s, 'alira veford.'), [1, 1]);
  assert.deepEqual(comparisonFeatures(s, 'Elixelle Bagromski'), [1, 0]);
  assert.deepEqual(comparisonFeatures(s, 'Bexis Stevski'), [1, 0]);
  // One page missing: undecided, whatever the answer.
  const half = state('Who is older, Elixelle Bagromski or Alira Veford?', ['Alira Veford'], [elixelle]);
  assert.deepEqual(comparisonView(half)?.values, [1915, undefined]);
  assert.deepEqual(comparisonFeatures(half, 'Alira Veford'), [0, 0]);
  // "Born later" asks for the larger year.
  const later = state('Who was born later, Elixelle Bagromski or Alira Veford?', [], [elixelle, alira]);
  assert.equal(comparisonView(later)?.wantSmaller, false);
  assert.deepEqual(comparisonFeatures(later, 'Elixelle Bagromski'), [1, 1]);
});

test('plain comparison of films under alternative titles: the real pages\' release years, not a re-release or the other film the note names', () => {
  const pages: Page[] = [
    ['film-01339-alt', 'The Mirror of Krapavburg', 'The Mirror of Krapavburg is the title under which Stations of Lighthouse was first shown in Trishovenia. A different picture, A Canal in Elovale (1907), directed by Orowarnie Mizavford with Zujexar Suvathsen in the lead, has also been listed under that title.'],
    ['film-00905-alt', 'A Witness in Pryjemmont', 'A Witness in Pryjemmont is the title under which A Hunter in Alynesfield was first shown in Sheasornmark. A different picture, Shadows of Field (1964), directed by Pialathette Grirmann with Aleaelaina Vezacroft in the lead, has also been listed under that title.'],
    ['film-01339-p0', 'Stations of Lighthouse', 'Stations of Lighthouse is a western film from 1999, directed by Greathina Faisirford. Stations of Lighthouse was restored and re-released in 2021. The film premiered in Keareamfield in 1999. The film was made in Trishovenia. The lead role in Stations of Lighthouse is played by Lulette Dreford.'],
    ['film-00905-p0', 'A Hunter in Alynesfield', 'A Hunter in Alynesfield is a romance film from 1938, directed by Taon Tanmann. The lead role in A Hunter in Alynesfield is played by Tapromina Prigrylelli. The film premiered in Orodramholm in 1938. The film was made in Sheasornmark. Critics praised the photography of A Hunter in Alynesfield.'],
  ];
  const q = 'Which film was released more recently, The Mirror of Krapavburg or A Witness in Pryjemmont?';
  const s = state(q, ['Stations of Lighthouse', 'The Mirror of Krapavburg'], pages.slice(0, 2), pages.slice(2));
  assert.deepEqual(comparisonView(s), { options: ['The Mirror of Krapavburg', 'A Witness in Pryjemmont'], wantSmaller: false, values: [1999, 1938] });
  // The option as asked and the real title it stands for both name it.
  assert.deepEqual(comparisonFeatures(s, 'The Mirror of Krapavburg'), [1, 1]);
  assert.deepEqual(comparisonFeatures(s, 'Stations of Lighthouse'), [1, 1]);
  assert.deepEqual(comparisonFeatures(s, 'A Hunter in Alynesfield'), [1, 0]);
  assert.deepEqual(comparisonFeatures(s, 'A Canal in Elovale'), [1, 0]);
  // Only the alternative-title notes: the real pages are not retrieved, nothing is known.
  assert.deepEqual(comparisonView(state(q, [], pages.slice(0, 2)))?.values, [undefined, undefined]);
});

test('plain comparisons of companies and cities: the founding year, not an office opened later; inhabitants', () => {
  const s = state('Which company was founded earlier, Krabeamski Energy or Nawood Freight?', ['Krabeamski Energy'], [
    ['company-00596-p0', 'Krabeamski Energy', "Krabeamski Energy is an energy company founded in 1968 by Steaara Nialarberg. Krabeamski Energy opened an office in Nuwalport in 1984. Krabeamski Energy's headquarters are in Jonstead."],
    ['company-00416-p0', 'Nawood Freight', "Founded by Jodeandis Krindberg in 1978, Nawood Freight is a company in the shipping business. The company employs about 10,650 people. The company moved its factories to Vyton in 2007. Nawood Freight's headquarters are in Lummere."],
  ]);
  assert.deepEqual(comparisonView(s)?.values, [1968, 1978]);
  assert.deepEqual(comparisonFeatures(s, 'Krabeamski Energy'), [1, 1]);
  const c = state('Which city has more inhabitants, Gostoxfield or Old Tralolbridge?', ['Gostoxfield'], [
    ['city-00505-p0', 'Gostoxfield', 'Gostoxfield is a town in the Meridian Isles, part of Nosyndia. Gostoxfield has about 243,000 inhabitants. A railway line links Gostoxfield with Saint Aloford. Notable people born in Gostoxfield include Barirnia Shezaton, Shuen Krigarnik and Tevie Pimski. Gostoxfield was founded in 1693.'],
    ['city-00404-p0', 'Old Tralolbridge', 'Old Tralolbridge is a city in Genia. The population of the city is roughly 73,000. Notable people born in Old Tralolbridge include Podronen Shanard, Seia Trurnby and Tadryselle Mamwood. The settlement of the city dates back to its founding in 1239.'],
  ]);
  assert.deepEqual(comparisonView(c), { options: ['Gostoxfield', 'Old Tralolbridge'], wantSmaller: false, values: [243000, 73000] });
  assert.deepEqual(comparisonFeatures(c, 'Gostoxfield'), [1, 1]);
});

// Bridge with alternative titles: each note also names another novel and its author, whose page is retrieved too (born 1933).
const bridgePages: Page[] = [
  ['book-01046-alt', 'Mountains of Signal', 'Early editions of A Orchard in Prexwick appeared as Mountains of Signal. Catalogues also give that title to Voyages of Shadow, written by Aludrendel Zeakeswood and published by Orurarbridge Publishing in 1962.'],
  ['book-00395-alt', 'A Garrison in Kryalealton', 'Early editions of The Harbor of Krosesvale appeared as A Garrison in Kryalealton. Catalogues also give that title to A Frontier in Upper Cylirnmere, written by Groen Koisythford and published by Tryrsen Press in 1943.'],
  ['book-01046-p0', 'A Orchard in Prexwick', 'A Orchard in Prexwick is a 1927 satirical novel written by Niva Grawavski. Tryrsen Press brought out A Orchard in Prexwick. A Orchard in Prexwick is set in Alunbridge.'],
  ['book-00395-p0', 'The Harbor of Krosesvale', 'The Harbor of Krosesvale is a crime novel by Syxa Brekernley, first published in 1886. The Harbor of Krosesvale won the Tessaly Award in 1887. The novel was adapted for radio in 1893. Shiport Books brought out The Harbor of Krosesvale.'],
  ['person-00682-p0', 'Niva Grawavski', "Niva Grawavski was a Sheasornmarker novelist who was born in 1903 and died in 1961. She is a graduate of Drahoez College. Niva Grawavski's novels include The Hidden Valley, The Golden Painter and A Orchard in Prexwick. She was born in Fuleanburg. She was a close friend of Vetho Wugralcroft."],
  ['person-01401-p0', 'Syxa Brekernley', 'Born in 1856, Syxa Brekernley was a Faorathenian novelist who died in 1906. Syxa Brekernley wrote Endless Harvest, The Harbor of Krosesvale and Bitter Crown. She is a native of Prosanmont. Her papers are kept at Jawood University.'],
  ['person-01117-p0', 'Aludrendel Zeakeswood', 'Aludrendel Zeakeswood (1933–1991) was a Nytheshi novelist. Aludrendel Zeakeswood received the Brannock Medal in 1985. Aludrendel Zeakeswood later moved to Port Krazomhaven. He wrote A Letter in Linport, The Open Meadow and Voyages of Shadow. He is the son of Fagenon Mokarnby. His birthplace is Isaburg.'],
];
const bridgeQ = 'Which novel has the author who was born later, Mountains of Signal or A Garrison in Kryalealton?';

test('bridge comparison through alternative titles: the real novels\' authors\' births, not the author the note names', () => {
  const [altA, altB, bookA, bookB, niva, syxa, other] = bridgePages;
  const s = state(bridgeQ, ['A Orchard in Prexwick', 'Mountains of Signal'], [altA!, other!], [altB!, bookA!], [bookB!, niva!], [syxa!]);
  assert.deepEqual(comparisonView(s), { options: ['Mountains of Signal', 'A Garrison in Kryalealton'], wantSmaller: false, values: [1903, 1856] });
  assert.deepEqual(comparisonFeatures(s, 'Mountains of Signal'), [1, 1]);
  assert.deepEqual(comparisonFeatures(s, 'A Orchard in Prexwick'), [1, 1]);
  assert.deepEqual(comparisonFeatures(s, 'A Garrison in Kryalealton'), [1, 0]);
  assert.deepEqual(comparisonFeatures(s, 'The Harbor of Krosesvale'), [1, 0]);
  // The people themselves are not the novels asked about.
  assert.deepEqual(comparisonFeatures(s, 'Niva Grawavski'), [1, 0]);
  // Without Syxa Brekernley's page the second novel's author is named but not dated: undecided.
  const partial = state(bridgeQ, [], [altA!, altB!, bookA!, bookB!, niva!, other!]);
  assert.deepEqual(comparisonView(partial)?.values, [1903, undefined]);
  assert.deepEqual(comparisonFeatures(partial, 'Mountains of Signal'), [0, 0]);
  // Without the real novel's page the alternative title leads nowhere, though its author's page names it.
  assert.deepEqual(comparisonView(state(bridgeQ, [], [altA!, altB!, bookB!, niva!, syxa!, other!]))?.values, [undefined, 1856]);
});

test('bridge comparison: a founder named on the company page, or only on the founder\'s own page', () => {
  const brearnburg: Page = ['company-00551-p0', 'Brearnburg Lines', 'Brearnburg Lines is a shipping firm that Tejanar Kryprovski established in 2000. The company moved its factories to Bysteamvale in 2024. The company employs about 4,000 people. Brearnburg Lines is based in Port Rarnholm.'];
  const tejanar: Page = ['person-00419-p0', 'Tejanar Kryprovski', "Tejanar Kryprovski (born 1980) is a Cazellander entrepreneur. Tejanar Kryprovski's father is Drivuon Drasmann. He founded Shosymberg Press and Brearnburg Lines. In 2024, Tejanar Kryprovski was awarded the Silver Quill Award. Tejanar Kryprovski married Dundara Hursen. He was born and raised in Sethburg. He studied at Govwood College."];
  const eluzomara: Page = ['person-02302-p0', 'Eluzomara Kruvton', 'Born in 1969, Eluzomara Kruvton is a Thoenian physicist. Eluzomara Kruvton is married to Trealornar Biford. Eluzomara Kruvton is a native of Grisirholm. Her papers are kept at Bawood University. Eluzomara Kruvton is the founder of Nirnane Energy. She often worked with Isinara Naik.'];
  // Nirnane Energy's own page is not retrieved; Eluzomara Kruvton's says she founded it.
  const s = state('Which company has the founder who was born first, Brearnburg Lines or Nirnane Energy?', ['Nirnane Energy'], [brearnburg, tejanar], [eluzomara]);
  assert.deepEqual(comparisonView(s), { options: ['Brearnburg Lines', 'Nirnane Energy'], wantSmaller: true, values: [1980, 1969] });
  assert.deepEqual(comparisonFeatures(s, 'Nirnane Energy'), [1, 1]);
  assert.deepEqual(comparisonFeatures(s, 'Brearnburg Lines'), [1, 0]);
});

const saintPoport: Page = ['city-00329-p0', 'Saint Poport', 'Saint Poport is one of the cities of Bathaxovia. The settlement of the city dates back to its founding in 1882. The city is twinned with Rooreford. The population of Saint Poport is roughly 11,000. Notable people born in Saint Poport include Zizavette Taova and Gao Grimann.'];
const nahaven: Page = ['city-00295-p0', 'Nahaven', 'Nahaven is one of the cities of Vidasistan. Notable people born in Nahaven include Windis Shogronwood, Trujusus Prakrunwood and Brubyara Feamby. The settlement of the city dates back to its founding in 1306. The population of Nahaven is roughly 1,623,000.'];

test('same nationality: each person\'s nationality adjective from their own page', () => {
  const hael: Page = ['person-04450-p0', 'Hael Gabrearsen', 'Hael Gabrearsen (born 1971) is a Fisoran composer. He is a graduate of Namerfield Polytechnic. Hael Gabrearsen is a native of East Kreawavale. His father was Jamen Kreisendby.'];
  const zythie: Page = ['person-01305-p0', 'Zythie Genorncroft', 'Zythie Genorncroft was a Fisoran physicist who was born in 1885 and died in 1978. She later moved to Vashaholm. She is a graduate of Sethburg Polytechnic. Zythie Genorncroft is married to Veaso Sarton. Her birthplace is Vawick.'];
  const yes = state('Are Hael Gabrearsen and Zythie Genorncroft of the same nationality?', ['yes'], [hael], [zythie]);
  assert.deepEqual(sameComparisonView(yes), { options: ['Hael Gabrearsen', 'Zythie Genorncroft'], values: ['Fisoran', 'Fisoran'], same: true });
  assert.deepEqual(sameComparisonFeatures(yes, 'Yes.'), [1, 1]);
  assert.deepEqual(sameComparisonFeatures(yes, 'no'), [1, 0]);
  assert.deepEqual(sameComparisonFeatures(yes, 'Fisoran'), [1, 0]);
  // "Born in 1890, Alira Veford was an Alastathmarker politician": the adjective, whatever opens the sentence.
  const no = state('Are Elixelle Bagromski and Alira Veford of the same nationality?', ['no'], [elixelle, alira]);
  assert.deepEqual(sameComparisonView(no)?.values, ['Drobyistani', 'Alastathmarker']);
  assert.deepEqual(sameComparisonFeatures(no, 'no'), [1, 1]);
  assert.deepEqual(sameComparisonFeatures(no, 'yes'), [1, 0]);
  // One page missing: undecided.
  assert.deepEqual(sameComparisonFeatures(state('Are Elixelle Bagromski and Alira Veford of the same nationality?', ['no'], [elixelle]), 'no'), [0, 0]);
});

test('same country: the country a city is in, past a region; a company through its city\'s page', () => {
  const no = state('Are Saint Poport and Nahaven in the same country?', ['no'], [saintPoport, nahaven]);
  assert.deepEqual(sameComparisonView(no), { options: ['Saint Poport', 'Nahaven'], values: ['Bathaxovia', 'Vidasistan'], same: false });
  assert.deepEqual(sameComparisonFeatures(no, 'no'), [1, 1]);
  // "a town in the Meridian Isles, part of Nosyndia": the country, not the region.
  const gostoxfield: Page = ['city-00505-p0', 'Gostoxfield', 'Gostoxfield is a town in the Meridian Isles, part of Nosyndia. Gostoxfield has about 243,000 inhabitants. A railway line links Gostoxfield with Saint Aloford. Notable people born in Gostoxfield include Barirnia Shezaton, Shuen Krigarnik and Tevie Pimski. Gostoxfield was founded in 1693.'];
  const meorahaven: Page = ['city-00035-p0', 'West Meorahaven', 'West Meorahaven is the capital city of Nosyndia. The city has about 660,000 inhabitants. The settlement of the city dates back to its founding in 845. Notable people born in West Meorahaven include Zekrendara Stindby, Geabeia Dragrilez and Stasa Shiik.'];
  const yes = state('Are Gostoxfield and West Meorahaven in the same country?', ['yes'], [gostoxfield, meorahaven]);
  assert.deepEqual(sameComparisonView(yes)?.values, ['Nosyndia', 'Nosyndia']);
  assert.deepEqual(sameComparisonFeatures(yes, 'yes'), [1, 1]);
  // Companies: "based in Navbridge", "headquartered in Upper Brathwick", then each city's page.
  const companies: Page[] = [
    ['company-00351-p0', 'Kokethholm Automotive', 'Kokethholm Automotive is an automotive firm that Tarnar Minley established in 1960. The company moved its factories to Woford in 1994. Kokethholm Automotive is based in Navbridge. The company opened an office in Upper Pusbridge in 2007.'],
    ['company-00377-p0', 'Thagoxford Foods', 'Thagoxford Foods is a food processing firm that Comendo Gefymmann established in 1904. Thagoxford Foods opened an office in Port Vabrovale in 1926. The company is headquartered in Upper Brathwick.'],
  ];
  const cities: Page[] = [
    ['city-00580-p0', 'Navbridge', 'Navbridge is a town in the Northern Shelf, part of Grandenia. The city is twinned with Upper Tyrhaven. Navbridge has about 18,000 inhabitants. Navbridge is home to Triton University. Notable people born in the city include Celis Hukraford, Graxar Breaski and Cirette Isamton. The settlement of the city dates back to its founding in 1608.'],
    ['city-00266-p0', 'Upper Brathwick', 'Upper Brathwick is one of the cities of Keceovia. Upper Brathwick is home to Upper Brathwick Polytechnic. Notable people born in Upper Brathwick include Fesie Grekrulez. The population of Upper Brathwick is roughly 54,000. Upper Brathwick was founded in 787.'],
  ];
  const q = 'Are Kokethholm Automotive and Thagoxford Foods in the same country?';
  assert.deepEqual(sameComparisonView(state(q, ['no'], companies, cities))?.values, ['Grandenia', 'Keceovia']);
  assert.deepEqual(sameComparisonFeatures(state(q, ['no'], companies, cities), 'no'), [1, 1]);
  assert.deepEqual(sameComparisonFeatures(state(q, ['no'], companies, cities.slice(0, 1)), 'no'), [0, 0]);
});

test('same country: a nationality against a country only through the page saying what its people are called', () => {
  const trearoxvale: Page = ['city-00261-p0', 'Trearoxvale', 'Trearoxvale is one of the cities of Alastathmark. The settlement of the city dates back to its founding in 1552. The city has about 99,000 inhabitants. Notable people born in Trearoxvale include Femavar Gristysby, Keamar Nithley and Alira Veford. A railway line links the city with Bevford.'];
  const alastathmark: Page = ['country-00021-p0', 'Alastathmark', "Alastathmark (the Federation of Alastathmark) is a state in the Sable Coast. The country has a population of about 69 million. The official language of the country is Elistoish. The country's capital city is West Wyalothholm. People from Alastathmark are called Alastathmarkers."];
  const q = 'Are Alira Veford and Trearoxvale in the same country?';
  const unknown = state(q, ['yes'], [alira, trearoxvale]);
  assert.deepEqual(sameComparisonView(unknown), { options: ['Alira Veford', 'Trearoxvale'], values: ['Alastathmarker', 'Alastathmark'], same: undefined });
  assert.deepEqual(sameComparisonFeatures(unknown, 'yes'), [0, 0]);
  assert.deepEqual(sameComparisonFeatures(state(q, ['yes'], [alira, trearoxvale, alastathmark]), 'yes'), [1, 1]);
});

test('bridge same nationality: each film\'s director through an alternative title, not the country the film was made in', () => {
  const pages: Page[] = [
    ['film-01269-alt', 'A Country in Bysteamvale', 'A Country in Bysteamvale is the title under which A Station in Landmere was first shown in Harora. A different picture, A Bell in Drucearnvale (1982), directed by Nerel Koxwood with Stymovo Koford in the lead, has also been listed under that title.'],
    ['film-01269-p0', 'A Station in Landmere', 'A Station in Landmere is a thriller picture that Drielavon Nexova directed; it was released in 2024. A Station in Landmere was restored and re-released in 2024. The film stars Tryoreasia Ziby in the leading role.'],
    ['film-00848-p0', 'The Paper Stranger', 'The Paper Stranger is a horror film from 1928, directed by Bevuxis Geandsen. The Paper Stranger is a production from Harora. The Paper Stranger premiered in Oriford in 1929. The lead role in the film is played by Brarar Kathsen. The score of the film was written by Shysolelle Naton.'],
    ['person-04411-p0', 'Drielavon Nexova', 'Drielavon Nexova (born 1972) is a Haroran film director. Drielavon Nexova often worked with Mathais Shernsen. Drielavon Nexova is a native of Kokrelfield. Drielavon Nexova directed Glass Sparrow and A Station in Landmere.'],
    ['person-02899-p0', 'Bevuxis Geandsen', "Bevuxis Geandsen (1873–1943) was a Haroran film director. He often worked with Higoara Jolski. Bevuxis Geandsen directed A Quarry in Bekanstead, The Paper Stranger and The Stolen Bell. He spent most of his career in Kiwick. He was born and raised in Alarnmere. Bevuxis Geandsen studied at Elishoxburg Polytechnic. Bevuxis Geandsen's spouse is Haciara Lealandwood."],
  ];
  const q = 'Do the directors of A Country in Bysteamvale and The Paper Stranger have the same nationality?';
  const s = state(q, ['yes'], pages.slice(0, 2), pages.slice(2));
  assert.deepEqual(sameComparisonView(s), { options: ['A Country in Bysteamvale', 'The Paper Stranger'], values: ['Haroran', 'Haroran'], same: true });
  assert.deepEqual(sameComparisonFeatures(s, 'yes'), [1, 1]);
  assert.deepEqual(sameComparisonFeatures(s, 'no'), [1, 0]);
  // A director's page missing: the film names them, but their nationality is unknown.
  const missing = state(q, ['yes'], pages.filter(([id]) => id !== 'person-02899-p0'));
  assert.deepEqual(sameComparisonView(missing)?.values, ['Haroran', undefined]);
  assert.deepEqual(sameComparisonFeatures(missing, 'yes'), [0, 0]);
  // Only the alternative-title note, not the real film's page: nothing known of the first.
  assert.deepEqual(sameComparisonFeatures(state(q, ['yes'], pages.filter(([id]) => id !== 'film-01269-p0')), 'yes'), [0, 0]);
});

test('bridge "from the same country": founders named on the company page or only on their own', () => {
  const kokethholm: Page = ['company-00351-p0', 'Kokethholm Automotive', 'Kokethholm Automotive is an automotive firm that Tarnar Minley established in 1960. The company moved its factories to Woford in 1994. Kokethholm Automotive is based in Navbridge. The company opened an office in Upper Pusbridge in 2007.'];
  const tarnar: Page = ['person-01234-p0', 'Tarnar Minley', "Tarnar Minley was a Gatholoran entrepreneur who was born in 1931 and died in 1980. Tarnar Minley's birthplace is Viholm. In 1988, he was awarded the Tessaly Award. Tarnar Minley's papers are kept at Faceaez College."];
  const comendo: Page = ['person-03899-p0', 'Comendo Gefymmann', 'Born in 1867, Comendo Gefymmann was a Gatholoran chemist who died in 1922. He is the founder of Thagoxford Foods. He is a native of Old Kreagrirnburg. He studied at Putassen University.'];
  // Thagoxford Foods' own page is not retrieved; Comendo Gefymmann's says he founded it.
  const s = state('Are the founders of Kokethholm Automotive and Thagoxford Foods from the same country?', ['yes'], [kokethholm, tarnar], [comendo]);
  assert.deepEqual(sameComparisonView(s), { options: ['Kokethholm Automotive', 'Thagoxford Foods'], values: ['Gatholoran', 'Gatholoran'], same: true });
  assert.deepEqual(sameComparisonFeatures(s, 'yes'), [1, 1]);
});

test('yes/no comparisons and other questions give no "A or B" view', () => {
  const yesNo = state('Are Saint Poport and Nahaven in the same country?', ['no'], [saintPoport, nahaven]);
  assert.equal(comparisonView(yesNo), undefined);
  assert.deepEqual(comparisonFeatures(yesNo, 'no'), [0, 0]);
  assert.equal(comparisonView(state('Do the directors of Hidden Frontier and A Choir in Keiselton have the same nationality?', ['no'])), undefined);
  assert.equal(comparisonView(state('When was the city where Alira Veford was born founded?', ['1420'], [alira])), undefined);
  // Nor a "same" view for other questions.
  assert.equal(sameComparisonView(state('Who is older, Elixelle Bagromski or Alira Veford?', [], [elixelle, alira])), undefined);
  assert.deepEqual(sameComparisonFeatures(state('When was the city where Alira Veford was born founded?', ['1420'], [alira]), 'yes'), [0, 0]);
  // A comparison with nothing retrieved yet: the view, without values.
  assert.deepEqual(comparisonView(state('Which novel was published first, The Salt Tower or Archives of Mountain?', [])), {
    options: ['The Salt Tower', 'Archives of Mountain'], wantSmaller: true, values: [undefined, undefined],
  });
});

test('the view is computed once per state', () => {
  const s = state('Who is older, Elixelle Bagromski or Alira Veford?', ['Alira Veford'], [elixelle, alira]);
  assert.equal(comparisonView(s), comparisonView(s));
});

test('needs: an option with no page retrieved; an alternative title\'s real page; nothing once decided', () => {
  const q = 'Who is older, Elixelle Bagromski or Alira Veford?';
  assert.deepEqual(comparisonNeeds(state(q, [])), ['Elixelle Bagromski', 'Alira Veford']);
  assert.deepEqual(comparisonNeeds(state(q, [], [elixelle])), ['Alira Veford']);
  assert.deepEqual(comparisonNeeds(state(q, [], [elixelle, alira])), []);
  const [altA, altB, bookA, bookB, niva, syxa, other] = bridgePages;
  // The notes alone: each real title, written out in full though not retrieved ("A Orchard in Prexwick", not "A Orchard").
  assert.deepEqual(comparisonNeeds(state(bridgeQ, [], [altA!, altB!, other!])), ['A Orchard in Prexwick', 'The Harbor of Krosesvale']);
  assert.deepEqual(comparisonNeeds(state(bridgeQ, [], [altA!, altB!, bookB!, niva!, syxa!, other!])), ['A Orchard in Prexwick']);
  // Decided, the notes' other works and their authors aside.
  assert.deepEqual(comparisonNeeds(state(bridgeQ, [], [altA!, other!], [altB!, bookA!], [bookB!, niva!], [syxa!])), []);
  // Not a comparison: nothing.
  assert.deepEqual(comparisonNeeds(state('When was the city where Alira Veford was born founded?', [], [alira])), []);
});

test('needs, bridge: the role-holder an option\'s page names, whose page is missing', () => {
  const [altA, altB, bookA, bookB, niva, , other] = bridgePages;
  // "The Harbor of Krosesvale is a crime novel by Syxa Brekernley": her page is missing.
  assert.deepEqual(comparisonNeeds(state(bridgeQ, [], [altA!, altB!, bookA!, bookB!, niva!, other!])), ['Syxa Brekernley']);
  assert.deepEqual(comparisonNeeds(state(bridgeQ, [], [altA!, altB!, bookA!, bookB!, other!])), ['Niva Grawavski', 'Syxa Brekernley']);
  const pages: Page[] = [
    ['film-00848-p0', 'The Paper Stranger', 'The Paper Stranger is a horror film from 1928, directed by Bevuxis Geandsen. The Paper Stranger is a production from Harora. The Paper Stranger premiered in Oriford in 1929. The lead role in the film is played by Brarar Kathsen.'],
    ['person-04411-p0', 'Drielavon Nexova', 'Drielavon Nexova (born 1972) is a Haroran film director. Drielavon Nexova is a native of Kokrelfield. Drielavon Nexova directed Glass Sparrow and A Station in Landmere.'],
    ['film-01269-p0', 'A Station in Landmere', 'A Station in Landmere is a thriller picture that Drielavon Nexova directed; it was released in 2024. The film stars Tryoreasia Ziby in the leading role.'],
  ];
  // The film's director, not its lead actor, though neither's page is retrieved.
  assert.deepEqual(comparisonNeeds(state('Do the directors of A Station in Landmere and The Paper Stranger have the same nationality?', ['yes'], pages)), ['Bevuxis Geandsen']);
  // A founder named before the cue ("a firm that F established"); an option with no page of its own whose
  // founder's page says so ("the founder of Nirnane Energy") needs nothing more.
  const brearnburg: Page = ['company-00551-p0', 'Brearnburg Lines', 'Brearnburg Lines is a shipping firm that Tejanar Kryprovski established in 2000. Brearnburg Lines is based in Port Rarnholm.'];
  const eluzomara: Page = ['person-02302-p0', 'Eluzomara Kruvton', 'Born in 1969, Eluzomara Kruvton is a Thoenian physicist. Eluzomara Kruvton is the founder of Nirnane Energy.'];
  assert.deepEqual(comparisonNeeds(state('Which company has the founder who was born first, Brearnburg Lines or Nirnane Energy?', [], [brearnburg, eluzomara])), ['Tejanar Kryprovski']);
});

test('needs, same country: the city a company\'s page places it in, when that page is missing', () => {
  const companies: Page[] = [
    ['company-00351-p0', 'Kokethholm Automotive', 'Kokethholm Automotive is an automotive firm that Tarnar Minley established in 1960. The company moved its factories to Woford in 1994. Kokethholm Automotive is based in Navbridge.'],
    ['company-00377-p0', 'Thagoxford Foods', 'Thagoxford Foods is a food processing firm that Comendo Gefymmann established in 1904. The company is headquartered in Upper Brathwick.'],
  ];
  const navbridge: Page = ['city-00580-p0', 'Navbridge', 'Navbridge is a town in the Northern Shelf, part of Grandenia. Navbridge has about 18,000 inhabitants.'];
  const brathwick: Page = ['city-00266-p0', 'Upper Brathwick', 'Upper Brathwick is one of the cities of Keceovia. Upper Brathwick was founded in 787.'];
  const q = 'Are Kokethholm Automotive and Thagoxford Foods in the same country?';
  assert.deepEqual(comparisonNeeds(state(q, ['no'], companies)), ['Navbridge', 'Upper Brathwick']);
  assert.deepEqual(comparisonNeeds(state(q, ['no'], companies, [navbridge])), ['Upper Brathwick']);
  assert.deepEqual(comparisonNeeds(state(q, ['no'], companies, [navbridge, brathwick])), []);
  // Cities saying their country themselves need nothing more; a nationality question asks for no city.
  assert.deepEqual(comparisonNeeds(state('Are Saint Poport and Nahaven in the same country?', ['no'], [saintPoport])), ['Nahaven']);
  assert.deepEqual(comparisonNeeds(state('Are Saint Poport and Nahaven in the same country?', ['no'], [saintPoport, nahaven])), []);
});

test('needs are computed once per state', () => {
  const s = state('Who is older, Elixelle Bagromski or Alira Veford?', [], [elixelle]);
  assert.equal(comparisonNeeds(s), comparisonNeeds(s));
});
