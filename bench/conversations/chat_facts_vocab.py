"""Vocabulary for the chat_facts set: people, places, jobs, pets, and the hobby threads.

Word lists are whitespace- or line-separated strings rather than Python lists so that the formatter keeps
them compact. A thread is written in a small line format that chat_facts.parse reads:

    # <category> <key> [attributes] | <label>
    > <fact> || <the same fact restated in other words, used when extraction repeats itself>
    ? <code> <beat indices> | <question> | <answer>

Codes: s single-hop, m multi-hop across sessions, v multi-hop through a third person, t temporal "when",
d temporal "how long after" (answers computed from the session dates), o open-domain, p paraphrase.
Slots in braces: {N} the friend, {he} {him} {his} {himself} their pronouns ({He} {His} capitalised),
{city} where they live, {R} a third person with {rhe} {rhim} {rhis}; other slots draw from POOLS.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Block:
    """A thread as written here: its facts in order and the questions on them."""

    cat: str
    key: str
    attrs: tuple[str, ...]
    label: str
    beats: list[tuple[str, str]] = field(default_factory=list)
    questions: list[tuple[str, tuple[int, ...], str, str]] = field(default_factory=list)


def parse(text: str, cat: str = "") -> list[Block]:
    """Read the line format above; "+" opens an unnamed one-fact block of `cat`, "+[keys]" one that
    contradicts the named threads."""
    blocks: list[Block] = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if line.startswith("#"):
            head, _, label = line[1:].partition("|")
            words = head.split()
            blocks.append(Block(words[0], (words + [""])[1] or words[0], tuple(words[2:]), label.strip()))
        elif line.startswith("+"):
            tags, line = line[2:].split("]", 1) if line.startswith("+[") else ("", line[1:])
            blocks.append(Block(cat, f"{cat}{len(blocks)}", tuple(tags.split()), ""))
            line = ">" + line
        if line.startswith(">"):
            fact, _, again = line[1:].partition("||")
            blocks[-1].beats.append((fact.strip(), again.strip()))
        elif line.startswith("?"):
            head, question, *answer = (part.strip() for part in line[1:].split("|"))
            code, refs = head.split()
            indices = tuple(int(i) for i in refs.split(","))
            blocks[-1].questions.append((code, indices, question, answer[0] if answer else ""))
    return blocks


# Names from many cultures, none of them an English word, a month, or a city, so that names never collide
# with the words a question is checked against.
NAMES_F = """
Mara Ines Ayesha Chiamaka Yuki Sofia Amara Leila Priya Mei Hana Zofia Ingrid Nadia Camila Lucia Fatima
Aditi Ngozi Akosua Thandiwe Keiko Minji Seoyeon Linh Thuy Marisol Valentina Ximena Paola Renata Beatriz
Joana Catarina Elif Zeynep Defne Aylin Noor Yasmin Salma Rania Dalia Anya Katya Olga Irina Svetlana
Agnieszka Katarzyna Magda Freya Astrid Sigrid Elin Saoirse Niamh Aoife Siobhan Ciara Eleni Dimitra
Katerina Ana Marta Nuria Alba Pilar Adaeze Funmilayo Yetunde Abena Efua Wanjiru Njeri Amina Halima
Meseret Tigist Selam Liya Xiaoling Jing Yan Ayaka Sakura Nanami Jiwoo Subin Priyanka Kavya Ananya Deepa
Lakshmi Tala Imelda Maricel Luana Kalani Ilse Greta Anneke Femke Lotte Maja Alenka Zuzana Ivana Milena
Dragana Naledi Zanele Esi Adwoa Anouk Margaux Clemence Elodie Chiara Giulia Francesca Bianca
""".split()

NAMES_M = """
Leo Tomas Kofi Hiroshi Rafael Mateo Diego Javier Andres Emeka Chinedu Oluwaseun Tunde Kwame Yaw Kwabena
Sipho Thabo Jabari Omar Karim Tariq Yusuf Hamza Bilal Emre Mehmet Kerem Burak Arjun Rohan Vikram Aarav
Karthik Siddharth Wei Hao Ming Jian Kenji Takumi Haruto Daiki Minho Jihoon Seungwoo Duc Minh Quang Bao
Piotr Tomasz Marek Kacper Lukasz Jakub Stefan Lars Anders Nils Bjorn Sven Finn Cian Oisin Declan Eoin
Nikos Giorgos Yannis Stavros Dmitri Sergei Alexei Ivan Mikhail Bogdan Andrei Luca Matteo Lorenzo
Giovanni Joao Tiago Rui Nuno Duarte Pedro Gustavo Felipe Rodrigo Thiago Carlos Ignacio Bruno Hugo
Mathis Julien Bastien Arnaud Henrik Jens Matthias Florian Jonas Malik Idris Femi Dayo Chidi Obinna
Nnamdi Tesfaye Dawit Yonas Abebe Haile Ravi Anil Suresh Manoj Ramon Emilio Joaquin Alonso Marco Dario
""".split()

CITIES = [
    c.strip()
    for c in """
Lisbon, Porto, Madrid, Seville, Valencia, Lyon, Marseille, Berlin, Hamburg, Munich, Vienna, Zurich,
Amsterdam, Rotterdam, Brussels, Copenhagen, Stockholm, Oslo, Helsinki, Dublin, Cork, Manchester, Glasgow,
Edinburgh, Warsaw, Krakow, Prague, Budapest, Athens, Istanbul, Cairo, Lagos, Accra, Nairobi,
Johannesburg, Cape Town, Mumbai, Bangalore, Delhi, Singapore, Manila, Hanoi, Seoul, Busan, Tokyo, Osaka,
Taipei, Melbourne, Auckland, Toronto, Montreal, Vancouver, Chicago, Boston, Seattle, Mexico City, Bogota,
Lima, Buenos Aires, Sao Paulo, Addis Ababa, Kampala, Casablanca, Tunis, Bilbao, Gothenburg
""".split(",")
]

# Holiday places, each with the moment a friend would single out afterwards.
DESTINATIONS = [
    tuple(part.strip() for part in entry.split("|"))
    for entry in """
Kyoto | an early walk through a bamboo forest before the crowds arrived
the Azores | a boat trip out to watch sperm whales; Crete | swimming in a turquoise lagoon on the west coast
Marrakesh | haggling for a rug in the old medina
Iceland | bathing in a hot spring under the northern lights
Cartagena | salsa dancing in a tiny bar inside the walled city
Hoi An | having a linen suit made by a tailor in two days
Zanzibar | a spice farm tour and coconut straight from the tree
Sicily | watching Etna smoke from a vineyard terrace
Tbilisi | the sulphur baths and endless plates of dumplings; Bali | a sunrise trek up a volcano
Patagonia | seeing a glacier calve into a lake; Cappadocia | a hot air balloon ride at dawn
the Dolomites | a cable car ride above the clouds; Oaxaca | a cooking class on seven kinds of mole
Sri Lanka | the train ride through the tea hills; Cusco | the hike up to a rainbow-coloured mountain
Jordan | a night in a desert camp under the stars; Sardinia | a secluded cove reached only by boat
Kerala | a night on a houseboat in the backwaters; Luang Prabang | the alms procession of the monks at dawn
Montenegro | kayaking across the Bay of Kotor
""".strip()
    .replace("\n", "; ")
    .split("; ")
]

# Job title (with its article) | workplace | the field a person in it might study.
JOBS = [
    tuple(part.strip() for part in entry.split("|"))
    for entry in """
an accountant | a logistics firm | accounting; an architect | a small design studio | architecture
a nurse | the city hospital | nursing; a primary school teacher | a school on the edge of town | education
a software developer | a payments startup | computer science
a graphic designer | an advertising agency | design; a pharmacist | a busy chemist's | pharmacology
a civil engineer | a bridge-building firm | engineering; a journalist | a regional newspaper | journalism
a chef | a busy bistro | the culinary arts; a lawyer | a firm specialising in housing cases | law
a data analyst | an insurance company | statistics; a physiotherapist | a sports clinic | physiology
a translator | an agency for medical documents | linguistics; a museum curator | a history museum | history
a lab technician | a university research lab | biology
a project manager | a construction company | management; a social worker | the city council | social work
a marketing manager | a cosmetics brand | marketing; a dentist | a family practice | dentistry
an electrician | a small contracting firm | electrical engineering
a librarian | the central library | library science
an air traffic controller | the regional airport | aviation
a veterinary nurse | an animal clinic | veterinary science
a sound engineer | a recording studio | audio engineering
a user researcher | a travel booking site | psychology; a hotel manager | a boutique hotel | hospitality
a bank clerk | a savings bank | finance; an urban planner | the transport authority | urban planning
a midwife | a maternity unit | midwifery
""".strip()
    .replace("\n", "; ")
    .split("; ")
]

PET_NAMES = """
Pickle Biscuit Mochi Pepper Olive Noodle Ziggy Waffles Bean Tofu Kiwi Mango Pretzel Juniper Pistachio
Nacho Muffin Socks Pixel Bagel Fig Marble Cosmo Sprout Crumble Truffle Peanut Gizmo Basil Rolo Wasabi
Nutmeg Pudding Domino Nugget Paprika Churro Sesame
""".split()

BANDS = [
    b.strip()
    for b in """The Velvet Tides, Lumen Drift, The Paper Lanterns, Northbound Choir, Saffron Static,
The Glass Orchard, Moth and Compass, Quiet Satellites, The Copper Foxes, Dune Parade""".split(",")
]

# Slots that draw a fresh value from a pool (a trailing digit asks for another distinct value).
POOLS = {"town": CITIES, "wcity": CITIES, "pet": PET_NAMES, "band": BANDS}

# A pair of lighter hobbies from one area yields one multi-hop question across both.
AREA_QUESTIONS = {
    "music": ("Which instruments has {N} been playing?", "{labels}"),
    "sport": ("Which sports has {N} taken up?", "{labels}"),
    "craft": ("Which crafts has {N} tried {his} hand at?", "{labels}"),
    "outdoors": ("What outdoor pastimes has {N} picked up?", "{labels}"),
    "food": ("Which food projects has {N} been learning?", "{labels}"),
    "mind": ("What brainy pastimes has {N} taken up?", "{labels}"),
}

HOBBIES = """
# hobby guitar music | the guitar
> {N} has been practising guitar most evenings after work to wind down. || {N} still picks up the guitar nearly every evening once the workday is done.
> {N} signed up for weekly guitar lessons at a music school in {city}.
> {N} played two songs on guitar at an open mic night in a bar and was shaking with nerves.
> {N} bought a secondhand acoustic guitar with a cedar top and a hard case.
> {N} is writing {his} own song on the guitar about the house {he} grew up in.
? s 1 | Where is {N} taking guitar lessons? | At a music school in {city}
? p 2 | How did {N} feel about performing in public? | Very nervous; {he} played two songs at an open mic night
? t 2 | When did {N} play at the open mic night?
? d 0,2 | How long after {N} mentioned practising guitar did {he} play at an open mic?
? o 0,2 | Would {N} enjoy a weekend at a folk music festival? | Probably yes: {he} plays guitar and has performed at an open mic
? s 3 | What kind of guitar did {N} buy? | A secondhand acoustic guitar with a cedar top
? p 4 | What is {N} composing at the moment? | An original song about the house {he} grew up in
? m 1,4 | How is {N} developing as a guitarist beyond practising at home? | Weekly lessons at a music school, and writing {his} own song
# hobby piano music | the piano
> {N} bought a digital piano with weighted keys so {he} can practise with headphones at night. || {N} now owns a digital piano with weighted keys and plays it with headphones late at night.
> {N} is teaching {himself} piano with an app and can now play a simple waltz.
> {N} played piano at a friend's wedding reception, a slow version of an old love song.
> {N} started lessons with a retired piano teacher who is strict about scales.
> {N} passed {his} grade three piano exam with a merit and was thrilled.
? s 0 | What did {N} buy so {he} could practise quietly at night? | A digital piano with weighted keys, played with headphones
? p 4 | How did {N} do in {his} recent music assessment? | {He} passed the grade three piano exam with a merit
? t 2 | When did {N} play piano at a friend's wedding?
? o 1,4 | Would {N} like a gift card for sheet music? | Very likely: {he} is learning piano and just passed a grade exam
? p 3 | Who has been instructing {N} at the keyboard? | A retired piano teacher who is strict about scales
? d 1,4 | How long after teaching {himself} with an app did {N} pass a piano exam?
? m 2,3 | How has {N} moved beyond learning piano alone? | Lessons with a strict retired teacher, and playing at a friend's wedding
# hobby drums music | the drums
> {N} started drum lessons and practises on a rubber pad so the neighbours do not complain. || {N} is learning the drums and uses a practice pad to keep the noise down for the neighbours.
> {N} joined a covers band as the drummer; they rehearse in a garage every Sunday.
> {N}'s band played its first gig at a pub in {city} and {he} broke a drumstick mid-song.
> {N} bought an electronic drum kit that folds away under {his} bed.
> {N} says drumming has done more for {his} stress than any app or gym membership.
? s 1 | What role does {N} have in {his} band? | The drummer in a covers band that rehearses on Sundays
? t 2 | When did {N}'s band play its first gig?
? p 2 | What mishap happened during {N}'s debut performance? | {He} broke a drumstick mid-song at the band's first gig
? o 1,4 | Would {N} enjoy watching a live rock show? | Probably yes: {he} drums in a covers band and finds it good for stress
? p 4 | What has helped {N} most with tension? | Drumming, more than any app or gym
? d 1,2 | How long after joining the covers band did {N} play a first gig?
? m 0,3 | What has {N} used to practise drums at home? | A rubber practice pad, then an electronic kit that folds under the bed
# hobby running sport | running
> {N} took up running with a beginner plan and can now run five kilometres without stopping. || {N} has got into running and manages five kilometres in one go now.
> {N} ran {his} first ten-kilometre race along the river in {city} in just under an hour.
> {N} bought proper running shoes after a shop assistant filmed {his} stride on a treadmill.
> {N} joined a running club that meets at six on Tuesday mornings.
> {N} finished the half marathon {he} had trained for all year and cried at the finish line.
? s 1 | How fast was {N}'s first ten-kilometre race? | Just under an hour
? t 4 | When did {N} complete {his} half marathon?
? p 4 | What emotional moment did {N} have at the end of a big road event? | {He} cried at the finish line of {his} half marathon
? o 0,4 | Would {N} be interested in a charity fun run? | Most likely: {he} runs regularly and finished a half marathon
? s 3 | How often does {N}'s running club get together? | Every Tuesday morning at six
? d 0,4 | How long after taking up running did {N} finish a half marathon?
? p 2 | How did {N} pick {his} new trainers? | After a shop assistant filmed {his} stride on a treadmill
? m 1,4 | Which races has {N} completed? | A ten-kilometre race along the river and a half marathon
# hobby swimming sport | swimming
> {N} has been swimming lengths at the public pool before work three mornings a week. || {N} keeps going to the public pool for early lengths a few times a week before work.
> {N} took a front crawl course because {his} breathing was all wrong.
> {N} did {his} first open-water swim in a cold lake and loved it despite the weeds.
> {N} swam a mile for a charity event and raised money for a hospice.
> {N} bought a wetsuit so {he} can keep swimming outdoors through the colder months.
? s 1 | What stroke did {N} take a course in? | Front crawl
? p 2 | Did {N} enjoy the chilly outdoor dip? | Yes, {he} loved {his} first open-water swim in a cold lake despite the weeds
? t 3 | When did {N} swim a mile for charity?
? p 3 | Which good cause benefited from {N}'s sponsored effort? | A hospice, through a one-mile charity swim
? o 0,4 | Would {N} like a holiday near a lake {he} could swim in? | Yes: {he} swims most weeks and has a wetsuit for open water
? s 4 | Why did {N} buy a wetsuit? | To keep swimming outdoors through the colder months
? d 0,3 | How long after {N} mentioned early-morning lengths did {he} swim a mile for charity?
# hobby climbing sport | bouldering
> {N} tried bouldering at an indoor climbing gym with a colleague and is hooked. || {N} has become keen on bouldering since a colleague took {him} to a climbing gym.
> {N} bought {his} own climbing shoes, which are painfully tight on purpose.
> {N} finally climbed {his} first purple route at the gym after weeks of falling off the top move.
> {N} went climbing on real rock in the hills outside {city} for the first time.
> {N} strained a finger tendon bouldering and has to rest {his} hand for a fortnight.
? s 0 | Who introduced {N} to bouldering? | A colleague, at an indoor climbing gym
? p 1 | Why are {N}'s new rock boots so uncomfortable? | Climbing shoes are meant to be painfully tight
? t 3 | When did {N} first climb outdoors on real rock?
? o 0,3 | Would {N} enjoy a trip to a famous climbing area? | Very likely: {he} boulders at a gym and has started climbing on real rock
? s 4 | What injury did {N} get while bouldering? | A strained finger tendon
? p 2 | What milestone did {N} reach at the wall following repeated failures? | {He} completed {his} first purple route
? d 0,2 | How long after discovering bouldering did {N} complete a purple route?
# hobby pottery craft | pottery
> {N} joined a Thursday night pottery class to unwind after long days at work. || {N} goes to a pottery class on Thursday evenings as a way to relax after work.
> {N} made a lopsided bowl on the wheel and is weirdly proud of it.
> {N} glazed a set of four mugs in a deep blue and plans to give them as gifts.
> {N} is looking into renting a shelf at a shared ceramics studio to use the kiln.
> {N} had a stall at a craft market in {city} and sold all six of {his} plant pots by noon.
? s 0 | What class does {N} go to on Thursday nights? | Pottery
? p 1 | What is {N} oddly pleased about? | A lopsided bowl {he} made on the wheel
? t 4 | When did {N} sell pots at a craft market?
? o 0,2 | Would {N} appreciate a voucher for a ceramics workshop? | Yes: {he} takes a pottery class and glazes {his} own mugs
? p 4 | How did {N}'s stand at the fair go? | {He} sold all six plant pots by noon
? s 2 | What colour did {N} glaze {his} mugs? | Deep blue
? d 0,4 | How long after starting pottery class did {N} sell pots at a market?
# hobby knitting craft | knitting
> {N} is learning to knit from online videos and has started a long striped scarf. || {N} has taken up knitting through online tutorials, beginning with a long striped scarf.
> {N} finished the striped scarf and admits the last metre is much tighter than the first.
> {N} joined a knitting circle that meets in a cafe on Sunday afternoons.
> {N} is knitting a tiny jumper for {his} friend's new baby.
> {N} bought far too much merino yarn at a wool festival and has no plan for it.
? s 2 | Where does {N}'s knitting group meet? | In a cafe on Sunday afternoons
? p 3 | What handmade gift is {N} preparing for an infant? | A tiny knitted jumper for a friend's baby
? t 1 | When did {N} finish the striped scarf?
? p 1 | What is wrong with {N}'s completed neckwear? | The last metre is much tighter than the first
? o 0,4 | Would {N} like hand-dyed wool as a present? | Yes: {he} knits and even overbuys yarn at festivals
? d 0,1 | How long after starting the scarf did {N} finish it?
? s 4 | What did {N} buy too much of at a wool festival? | Merino yarn
# hobby woodwork craft | woodworking
> {N} has been building a bookshelf out of reclaimed oak in {his} parents' garage. || {N} keeps spending weekends in {his} parents' garage on the reclaimed oak bookshelf.
> {N} took a weekend woodworking course and learned to cut dovetail joints by hand.
> {N} finished the oak bookshelf and says it only wobbles a little.
> {N} bought a second-hand workbench and a set of Japanese chisels.
> {N} is carving wooden spoons in the evenings and giving them away to friends.
? s 0 | What wood is {N} using for the bookshelf? | Reclaimed oak
? p 1 | What joinery skill did {N} pick up on a short class? | Cutting dovetail joints by hand
? t 2 | When did {N} finish building the bookshelf?
? d 0,2 | How long after starting the bookshelf did {N} finish it?
? o 0,3 | Would {N} like a visit to a tool fair? | Probably: {he} builds furniture and has bought a workbench and chisels
? p 4 | What kitchen utensils does {N} make as presents? | Carved wooden spoons
# hobby hiking outdoors | hiking
> {N} has started hiking on weekends with a group {he} found online. || {N} goes walking in the hills most weekends with a hiking group from the internet.
> {N} hiked to a mountain hut and stayed overnight, sharing a dorm with twelve snorers.
> {N} bought waterproof hiking boots after soaking {his} trainers in a bog.
> {N} completed a three-day hut-to-hut hike and says the views made every blister worth it.
> {N} is planning to lead a hike for {his} group for the first time.
? p 1 | Where did {N} spend the night on a trek? | In a mountain hut dorm with twelve snorers
? s 2 | Why did {N} buy waterproof boots? | {He} soaked {his} trainers in a bog
? t 3 | When did {N} do the three-day hut-to-hut hike?
? o 0,3 | Would {N} enjoy a walking holiday in the Alps? | Yes: {he} hikes most weekends and did a three-day hut-to-hut route
? d 0,3 | How long after starting weekend hikes did {N} complete a three-day hike?
? s 4 | What is {N} about to do for {his} hiking group? | Lead a hike for the first time
? p 3 | Was the scenery on {N}'s long trek a fair trade for the pain? | Yes, the views made every blister worth it
# hobby gardening outdoors | gardening
> {N} got an allotment plot after three years on the waiting list. || {N} finally has an allotment, after waiting three years for a plot.
> {N} planted tomatoes, courgettes and beans on the allotment and is fighting off slugs.
> {N} harvested so many courgettes that {he} has been leaving them on neighbours' doorsteps.
> {N} built a small greenhouse from old windows to grow chillies.
> {N} won second prize for {his} runner beans at a local garden show.
? s 0 | How long did {N} wait for an allotment? | Three years
? p 2 | What is {N} doing with surplus vegetables? | Leaving courgettes on neighbours' doorsteps
? t 4 | When did {N} win a prize at the garden show?
? o 1,3 | Would {N} appreciate a packet of heirloom seeds? | Yes: {he} grows vegetables on an allotment and chillies in a greenhouse
? s 3 | What did {N} build to grow chillies? | A small greenhouse from old windows
? p 1 | Which pests are bothering {N}'s crops? | Slugs
? d 0,4 | How long after getting the allotment did {N} win a prize for {his} beans?
# hobby birds outdoors | birdwatching
> {N} has got into birdwatching and bought binoculars for trips to the local wetland. || {N} has become a keen birdwatcher and now takes binoculars to the wetland near {his} home.
> {N} keeps a notebook of every bird species {he} sees and is at sixty-two so far.
> {N} saw a kingfisher by the canal and talked about it for ten minutes.
> {N} joined a dawn bird survey run by a conservation charity.
> {N} went on a boat trip to see puffins on a sea island and took hundreds of photos.
? s 2 | What bird did {N} spot by the canal? | A kingfisher
? p 1 | How many kinds has {N} logged? | Sixty-two species
? t 4 | When did {N} go to see puffins?
? o 0,3 | Would {N} enjoy a weekend at a nature reserve? | Yes: {he} is a keen birdwatcher who volunteers for bird surveys
? p 3 | What early-morning volunteering did {N} sign up for? | A dawn bird survey for a conservation charity
? d 0,4 | How long after taking up birdwatching did {N} go to see puffins?
# hobby sourdough food | sourdough bread
> {N} started baking sourdough bread and feeds {his} starter every morning before work. || {N} has got into sourdough baking and tends {his} starter each morning before heading to work.
> {N}'s first sourdough loaf came out flat and dense, but {he} ate it anyway.
> {N} finally baked a sourdough loaf with a proper open crumb and sent everyone photos.
> {N} bought a cast iron pot and a proving basket to improve {his} bread.
> {N} has started selling loaves to two neighbours every Saturday.
? s 3 | What equipment did {N} buy for {his} bread? | A cast iron pot and a proving basket
? p 1 | How did {N}'s earliest attempt turn out? | Flat and dense, though {he} ate it anyway
? t 2 | When did {N} bake a loaf with a proper open crumb?
? d 0,2 | How long after starting sourdough did {N} get a loaf with an open crumb?
? o 0,4 | Would {N} enjoy a tour of artisan bakeries? | Yes: {he} bakes sourdough and even sells loaves to neighbours
? p 4 | Who buys {N}'s homemade bread? | Two neighbours, every Saturday
# hobby pasta food | fresh pasta
> {N} has been learning to make fresh pasta by hand from {his} grandmother's recipe. || {N} keeps practising handmade pasta, following the recipe {his} grandmother taught {him}.
> {N} made ravioli stuffed with ricotta and spinach for a dinner party of eight.
> {N} bought a pasta machine and says rolling dough by hand is now a thing of the past.
> {N} took a cooking class on filled pasta shapes and mastered tortellini.
> {N} hosted a pasta night where each guest learned to shape orecchiette.
? s 1 | What did {N} serve at {his} dinner party? | Ravioli with ricotta and spinach
? p 2 | Which kitchen gadget did {N} recently get? | A pasta machine
? t 4 | When did {N} host the pasta night?
? o 0,3 | Would {N} enjoy a food tour of Bologna? | Very likely: {he} makes fresh pasta and took a class on filled shapes
? p 3 | What did {N} get the hang of at a culinary workshop? | Tortellini
? d 1,4 | How long after the ravioli dinner party did {N} host a pasta night?
# hobby ferment food | fermenting
> {N} has started fermenting vegetables and has jars of kimchi lined up on the counter. || {N} is into fermentation these days, with kimchi jars crowding {his} kitchen counter.
> {N} made {his} first batch of kombucha and it tasted like vinegar.
> {N} took a fermentation workshop and learned to make miso from scratch.
> {N} gave jars of homemade sauerkraut to {his} colleagues, and only half were polite about it.
> {N} bought a small fridge just for fermenting jars, to the dismay of {his} flatmate.
? s 1 | How did {N}'s first kombucha taste? | Like vinegar
? p 3 | How did coworkers react to {N}'s pickled cabbage present? | Only half were polite about the sauerkraut
? t 2 | When did {N} take the fermentation workshop?
? o 0,2 | Would {N} enjoy a Korean cooking class? | Probably: {he} makes kimchi and miso at home
? s 4 | What appliance did {N} buy for {his} jars? | A small fridge just for fermenting
? d 0,2 | How long after starting to ferment vegetables did {N} learn to make miso?
# hobby japanese mind | Japanese
> {N} is learning Japanese with an app and a weekly tutor, hoping to read manga. || {N} keeps up {his} Japanese study with a tutor once a week and hopes to read manga in the original.
> {N} passed the first level of the Japanese proficiency test.
> {N} had a whole conversation in Japanese with a shopkeeper and felt on top of the world.
> {N} joined a Japanese conversation meetup at a tea house in {city}.
> {N} can now read children's books in Japanese with a dictionary close at hand.
? s 1 | Which language test has {N} passed? | The first level of the Japanese proficiency test
? p 2 | How did {N} do when speaking with a store owner in a foreign language? | {He} held a whole conversation in Japanese and felt on top of the world
? t 1 | When did {N} pass the Japanese proficiency test?
? o 0,1 | Would {N} enjoy a trip to Tokyo? | Likely: {he} is learning Japanese and passed the first proficiency level
? s 3 | Where does {N}'s Japanese meetup take place? | At a tea house in {city}
? d 0,1 | How long after starting Japanese did {N} pass the first proficiency level?
# hobby chess mind | chess
> {N} has been playing chess online every night and is obsessed with improving {his} rating. || {N} plays chess on the internet nightly and keeps chasing a higher rating.
> {N} joined a chess club that meets in the back room of a pub.
> {N} played in {his} first rated chess tournament and won three of five games.
> {N} bought a wooden chess set and a book of endgame puzzles.
> {N} is teaching {his} nephew to play chess on Sunday afternoons.
? s 1 | Where does {N}'s chess club meet? | In the back room of a pub
? p 2 | What was {N}'s record at {his} debut competition? | Three wins from five games
? t 2 | When did {N} play {his} first rated tournament?
? o 0,2 | Would {N} enjoy watching a world championship match? | Yes: {he} plays chess nightly and competes in tournaments
? p 4 | Which relative is {N} coaching at the board? | {His} nephew, on Sunday afternoons
? d 0,2 | How long after getting hooked on online chess did {N} play a rated tournament?
# hobby astronomy mind | astronomy
> {N} bought a small telescope and has been looking at the moon's craters from {his} balcony. || {N} now owns a little telescope and studies the craters of the moon from {his} balcony.
> {N} saw the rings of Saturn for the first time and called it the best moment of the year.
> {N} joined an astronomy society that runs stargazing nights in a dark field outside {city}.
> {N} stayed up until four to photograph a meteor shower and caught three streaks.
> {N} is taking an online course in astrophysics for beginners.
? s 1 | What did {N} see through the telescope for the first time? | The rings of Saturn
? p 3 | What did {N} capture on camera late at night? | Three streaks of a meteor shower
? t 3 | When did {N} photograph the meteor shower?
? o 0,2 | Would {N} enjoy a trip to see the northern lights? | Very likely: {he} stargazes with a telescope and an astronomy society
? p 2 | Which group has {N} become a member of, and what does it organise? | An astronomy society that runs stargazing nights outside {city}
? d 0,1 | How long after buying a telescope did {N} see the rings of Saturn?
"""

# One-off events, one fact each ("+" opens a block; see chat_facts.parse).
EVENTS = """
+ {N} saw a jazz trio in a basement club in {city} and stayed until the lights came on.
? t 0 | When did {N} go to the basement jazz club?
? o 0 | Would {N} like tickets to a jazz festival? | Likely: {he} stayed at a jazz club until closing
? p 0 | How late was {N} out at that underground gig? | Until the lights came on
+ {N} was a guest at a three-day wedding in {town} and danced until {his} shoes gave out.
? t 0 | When did {N} attend the three-day wedding in {town}?
? p 0 | How did {N}'s footwear hold up at the celebration? | {His} shoes gave out from dancing
+ {N} went to {his} first live football match and now supports the home team with a passion.
? t 0 | When did {N} go to {his} first live football match?
? o 0 | Would {N} want to watch the cup final at a pub? | Probably: {he} has become a passionate supporter since {his} first match
+ {N} went to a photography exhibition about city life in the seventies and bought the catalogue.
? s 0 | What did {N} buy at the photography exhibition? | The catalogue
? p 0 | Which gallery show did {N} visit, and what was its subject? | A photography exhibition about city life in the seventies
+ {N} went to a stand-up comedy night and got picked on by the comedian from the front row.
? p 0 | What happened to {N} while seated near the stage at a funny gig? | The comedian picked on {him}
? t 0 | When did {N} go to the comedy night?
+ {N} spent a weekend at a music festival in a field and it rained the entire time.
? s 0 | What was the weather like at the festival {N} went to? | It rained the whole time
? t 0 | When was {N} at the music festival?
+ {N} saw a Shakespeare play in an outdoor theatre and got sunburnt in the second half.
? p 0 | What went wrong for {N} at that open-air drama performance? | {He} got sunburnt
? t 0 | When did {N} see the Shakespeare play?
+ {N} cheered on runners at the {town} marathon and handed out orange slices at mile twenty.
? t 0 | When did {N} cheer at the marathon in {town}?
? p 0 | What snack did {N} give out during the race? | Orange slices
+ {N} went to a supper club in a stranger's living room and loved the Georgian dumplings.
? s 0 | What dish did {N} love at the supper club? | Georgian dumplings
? p 0 | Where did {N} eat recently with people {he} had never met? | At a supper club in a stranger's living room
+ {N}'s pub quiz team won for the first time thanks to a question about volcanoes.
? t 0 | When did {N}'s pub quiz team win?
? p 0 | Which topic clinched {N}'s trivia victory? | A question about volcanoes
+ {N} spent a rainy afternoon at the science museum and got hooked on the dinosaur skeletons.
? p 0 | What fascinated {N} in an exhibition hall about fossils? | The dinosaur skeletons at the science museum
? t 0 | When did {N} visit the science museum?
"""
