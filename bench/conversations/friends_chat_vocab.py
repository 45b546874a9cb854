"""Vocabulary of the friends_chat set: names, places, things, the sentences friends tell news in, and chit-chat."""

from datetime import date, timedelta


def _w(text: str) -> tuple[str, ...]:
    return tuple(text.split("|"))


def _t(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(row.split("~")) for row in text.split("|"))


FIRST_NAMES = _w(
    "Priya|Tom|Maya|Jonah|Leila|Marcus|Ines|Callum|Zora|Felix|Anouk|Theo|Ruth|Dev|Camille|Oskar|Hana|Rafael|Greta|Malik|Sofia|Ewan|Nadia|Bruno|Keiko|Luca|Imani|Declan|Talia|Soren|Amara|Nico|Freya|Idris|Paloma|Hugo|Yasmin|Casper|Elif|Rowan"
)
RELATIVE_NAMES = _w(
    "Anya|Dana|Mirela|Lorna|Odile|Sunita|Agnes|Juno|Mags|Colette|Bea|Lottie|Inge|Wren|Femi|Rosalind|Tamsin|Priyanka|Maud|Esther|Delphine|Noor|Carys|Leonie"
)
RELATIONS = _w("sister|cousin|aunt|niece|sister-in-law")
CITIES = _w(
    "Lisbon|Porto|Seville|Valencia|Bologna|Turin|Krakow|Ljubljana|Tallinn|Ghent|Bruges|Lyon|Marseille|Bordeaux|Edinburgh|Galway|Copenhagen|Gothenburg|Bergen|Vienna|Salzburg|Budapest|Split|Athens|Thessaloniki|Istanbul|Marrakesh|Montreal|Quebec|Vancouver|Chicago|Boston|Oaxaca|Kyoto|Osaka|Seoul|Hanoi|Tbilisi|Riga|Naples"
)
RARE_PLACES = _w(
    "Vrångö|Kilchoan|Ystad|Portmeirion|Dinant|Hallstatt|Piran|Ronda|Matera|Cesky "
    "Krumlov|Giethoorn|Colmar|Mostar|Sintra|Tobermory|Étretat|Rovinj|Kotor|Bled|Monschau|Staithes|Aldeburgh|Plockton|Dingle"
)
BREEDS = _t(
    "dog~greyhound|dog~beagle|dog~border collie|dog~dachshund|dog~whippet|dog~corgi|dog~staffie|cat~ginger tabby|cat~Maine Coon|cat~black "
    "cat|cat~Siamese|rabbit~lop-eared rabbit|bird~cockatiel|dog~labrador"
)
PET_NAMES = _w(
    "Biscuit|Pickle|Mochi|Waffles|Juniper|Pretzel|Noodle|Clementine|Bramble|Toast|Olive|Ziggy|Basil|Pudding|Chutney|Marmite|Poppy|Fennel|Crumpet|Luna"
)
COMPANIES = _w(
    "Halden Analytics|Brightwater Studio|Pellmark Logistics|Oakline Health|Norvane Energy|Quillstone Press|Tessary Labs|Greyfield Architects|Corvel "
    "Foods|Lumio Games|Marrow & Finch|Ardent Robotics|Kestrel Insurance|Sablewood Schools|Vantor Bank|Pinecrest Clinic"
)
ROLES = _w(
    "product designer|data analyst|nurse|project manager|sous chef|junior architect|copy editor|account manager|lab technician|teacher|UX "
    "researcher|site engineer|pharmacist|marketing lead|physio|backend developer"
)
BOSS_HABITS = _t(
    "is obsessed with marathon running~running marathons|keeps bringing in sourdough~baking sourdough|spends every weekend sailing~sailing|collects "
    "vintage vinyl~collecting vinyl|does stand-up comedy on Thursdays~stand-up comedy|breeds orchids~growing orchids|plays in a ska band~playing "
    "ska|is training for a triathlon~triathlons"
)
HOBBIES = _t(
    "pottery~wheel-throwing~Clayhouse|bouldering~climbing~The Crux Wall|salsa~Latin dance~Casa Ritmo|life drawing~sketching models~Ink & "
    "Easel|Japanese~learning a language~Hoshi Language School|woodworking~carpentry~Grain Collective|choir~group singing~the Tuesday "
    "Singers|kickboxing~a combat sport~Ironside Gym|swimming~laps in a pool~the Lido on Mercer Street|cello~a string instrument~Allegro "
    "Music|improv~unscripted theatre~the Loose Ends troupe|sewing~making clothes~Stitch Lab"
)
PRODUCTS = _t(
    "headphones~Corvane|espresso machine~Bellaro|road bike~Velonix|e-reader~Paginar|air fryer~Crispa|robot "
    "vacuum~Dustrel|camera~Fotex|smartwatch~Tikra|standing desk~Uprise|mechanical keyboard~Klakk|tent~Trailmark|projector~Lumen|sewing "
    "machine~Stitchwell|electric scooter~Zipp"
)
OPINIONS = _w(
    "and honestly it was worth every penny|but I'm already a bit disappointed with it|and it's way better than the old one|though the battery life "
    "is not what they promised|and I use it every single day now|but it was a nightmare to set up"
)
AUTHORS = _w(
    "Ottilie Marsh|Benedikt Aurel|Ngozi Ferrante|Liam Castellanos|Hester Quaye|Rune Halvorsen|Mireille Dubois|Tobias Wren|Saoirse Lennox|Amadou "
    "Keita|Freda Okonkwo|Casimir Blum"
)
BOOK_TITLES = _w(
    "The Salt Orchard|A Map of Small Hours|Lantern Street|The Glass Cartographer|Nine Winters|What the River Kept|The Understudy|Paper Moons Over "
    "Ostend|The Last Ferry|Quiet Machines|House of Thin Walls|The Beekeeper's Ledger"
)
FILMS = _w(
    "Harbour Lights|The Ninth Passenger|Copper Sky|Midnight at the Aquarium|Small Fires|The Long Weekend|Orbit of Stray Dogs|Winter Tenants|Fever "
    "Pitch Blue|The Patient Gardener"
)
CINEMAS = _w("the Rex|the Electric|the Phoenix|the Roxy|the little arthouse place|the drive-in")
BANDS = _w(
    "Velvet Tractor|The Moth Parade|Sunless Kites|Juniper Static|Oyster Choir|Paper Lions|The Quiet Riot Club|Marble Youth|Neon Heron|Gloria Fuzz"
)
VENUES = _w("the Roundhouse|the Corn Exchange|the Barrowland|Vicar Street|the old tram depot|the Apollo")
RESTAURANTS = _t(
    "Georgian~Supra Kitchen|Ethiopian~Lalibela House|Sichuan~Red Lantern Noodle Bar|Peruvian~Ceviche Azul|Lebanese~Cedar & Mint|Korean~Bap "
    "Bap|Basque~Txoko|Sri Lankan~Hopper Hut|Mexican~Tlayuda Club|Vietnamese~Pho Saigon Corner"
)
INJURIES = _t(
    "sprained my ankle~sprain an ankle~playing five-a-side~ankle|pulled a muscle in my back~pull a back muscle~lifting a sofa~back|broke my "
    "wrist~break a wrist~falling off my bike~wrist|came down with flu~come down with flu~after the office party~flu|chipped a tooth~chip a "
    "tooth~biting into a frozen Mars bar~tooth|got stitches in my thumb~need stitches~slicing an onion~thumb"
)
HEALTH_PARA = {
    "ankle": "What was {p} doing when the foot injury happened?",
    "back": "How did {p} hurt the spine area?",
    "wrist": "What caused {p}'s fracture?",
    "flu": "After which event did {p} fall ill?",
    "tooth": "What did {p} bite that caused the dental damage?",
    "thumb": "What kitchen task ended in {p} needing medical care for a cut?",
}
STREETS = _w(
    "Albion Road|Mercer Lane|Fenwick Street|Holloway Terrace|Quarry Hill|Larch Avenue|Cobden Street|Rosehip Close|Wharf Row|Beacon Hill Road"
)
NEIGHBOURHOODS = _w("the east side|Hillcrest|Riverside|the old town|Northgate|Brookfield")
ACTIVITIES = _t(
    "repainted the whole bathroom~repaint the bathroom|went kayaking on the reservoir~go kayaking|ran my first 10k~run a first 10k|built a raised "
    "bed for tomatoes~build a raised bed|did a pub quiz with the work lot and came second~come second in a pub quiz|baked a lemon drizzle for the "
    "neighbours~bake a lemon drizzle|went to a life-size dinosaur exhibition~see the dinosaur exhibition|volunteered at the food bank~volunteer at "
    "the food bank|tried paddleboarding for the first time~try paddleboarding|went foraging for mushrooms~go foraging|spent the whole day at a board "
    "game cafe~spend a day at a board game cafe|finally got my motorbike licence~get a motorbike licence"
)
COMPANIONS = _w("my sister|my partner|two friends from uni|my dad|my cousin|the work crowd|my mum")
TRIP_DETAILS = _w(
    "the food was unreal|it rained literally every day|we walked about twenty kilometres a day|the hotel was tiny but charming|we ended up staying "
    "an extra night|the old town is gorgeous|I ate my body weight in pastries|we hired bikes and did the whole coast"
)
CHANGE_REASONS = _w(
    "the flights doubled in price|the hotel cancelled on us|there's a strike planned|my partner can't get the time off|a friend offered us her flat "
    "there|it's going to be way too hot"
)
PLANNED_EVENTS = _w("my cousin's wedding|a work conference|a long weekend with the uni lot|my mum's 60th")
GREETINGS = _w(
    "Hey {o}! Long time no chat, how have you been doing?|Morning! Have you got five minutes for a catch-up?|Hiya, sorry I went quiet for a bit, "
    "things have been hectic.|Hey you! How's everything going on your end?|Oi, you still alive over there? Haven't heard from you in ages!|Hello "
    "hello! Fancy a quick chat before dinner?|Hey {o}, just thinking about you, what's new with you lately?|Evening! Finally sat down with a cup of "
    "tea, how are you?"
)
GREETING_REPLIES = _w(
    "Hey! I'm good, just a bit tired, it's been a long week.|Oh hi! Always got time for you, go on then.|Haha, barely alive but here, how about you "
    "though?|All good here thanks, so nice to hear from you!|Heyyy, perfect timing, I was just about to message you actually.|Not bad at all, can't "
    "complain really, what's up?"
)
REACTIONS = _w(
    "Oh no, that sounds absolutely awful, I'm so sorry!|Ha, that's amazing, I love that for you.|Wait, seriously? That's brilliant news, well "
    "done!|Wow, I would never have guessed that one, honestly.|Haha, of course that happened to you, classic you.|That's so lovely, you totally "
    "deserve a bit of luck.|Ugh, that's so annoying, I'd be fuming if I were you.|Oh nice, you'll have to tell me more about it next time.|No way! "
    "I'm properly jealous right now, not going to lie.|Good for you, that's honestly a really big deal.|Hmm, sounds like a bit of a mixed bag then, "
    "doesn't it?|Aww, that actually made me smile, thanks for sharing.|Yikes, hope things get a bit easier for you soon.|That's so you, I can "
    "picture it perfectly already.|Oh wow, how did you even manage to pull that off?|Honestly that's the best thing I've heard all week."
)
PROMPTS = _w(
    "Anyway, enough about me, what's been going on with you?|So what else is new in your world these days?|Go on then, any gossip or news from your "
    "side?|And how are things with you, anything exciting happening?|Tell me something good, I could really use it today.|What have you been up to "
    "since we last talked?"
)
SMALL_TALK = _w(
    "The weather here has been absolutely miserable all week, grey and drizzly.|Work is just work at the moment, nothing much to report really.|I "
    "keep meaning to call you properly but the days just vanish somehow.|Honestly I've mostly been sleeping and watching rubbish telly, no "
    "complaints.|Not much happening here, just the usual chaos and too many emails.|I've been trying to drink less coffee, it is going very badly so "
    "far.|My phone screen is cracked again, don't ask, it's a long and stupid story.|It's been a quiet one here to be honest, which I'm secretly "
    "enjoying."
)
CLOSINGS = _w(
    "Right, I'd better go and make dinner, talk soon!|Okay I have to run, but this was lovely, speak soon x|Gotta dash, my battery is about to die, "
    "love you!|Let's catch up properly soon, yeah? Take care of yourself.|Anyway, off to bed for me, night night!|Must go, but message me how it "
    "goes, okay?"
)
CLOSING_REPLIES = _w(
    "Bye! Speak soon, and good luck with everything!|Night! Was really good to catch up with you.|Take care, and keep me posted on everything, "
    "yeah?|Sure thing, talk later, have a lovely evening!|Ciao for now, and give everyone my love please.|Okay, go go go, we'll talk properly next "
    "week."
)
OPENERS = _w(
    "Guess what,|Oh, I forgot to tell you,|Big news:|So,|Random update:|Oh and|Right, so|Okay so|Funny story:|Not sure I told you, but"
)
LISTS: dict[str, tuple[str, ...]] = {
    "friend": _w(
        "Anya|Dana|Mirela|Lorna|Odile|Sunita|Agnes|Juno|Mags|Colette|Bea|Lottie|Inge|Wren|Femi|Rosalind|Tamsin|Priyanka|Maud|Esther|Delphine|Noor|Carys|Leonie"
    ),
    "dish": _w(
        "a massive lasagne|Thai green curry|homemade pierogi|a shepherd's pie|paella|mushroom risotto|jerk chicken|a vegan chilli|dumplings from "
        "scratch|a Sunday roast"
    ),
    "show": _w(
        "Harbour Patrol|The Glasshouse|Quiet Acres|Neon Precinct|The Bakehouse Trials|Saltmarsh|Borderline Family|Dead Reckoning|Little Empires|The "
        "Night Ward"
    ),
    "platform": _w("Netflix|the BBC iPlayer|Prime|Disney+|some dodgy streaming site|Apple TV"),
    "plant": _w(
        "monstera|lemon tree|fiddle-leaf fig|chilli plant|orchid|olive tree|basil|avocado stone|cactus|bonsai"
    ),
    "plantnews": _w(
        "finally put out a new leaf|has started flowering|got attacked by aphids|doubled in size|nearly died while I was away|produced its first "
        "fruit"
    ),
    "colleague": _w("Fenna|Rajesh|Ottoline|Duncan|Marisol|Kwame|Birgit|Lachlan|Yusra|Cormac"),
    "colnews": _w(
        "is leaving to open a bakery|got engaged at the Christmas party|is moving to Singapore|just had twins|won the office fantasy football|is "
        "retiring in the spring|got promoted over my head|is running the London marathon"
    ),
    "game": _w(
        "Hollow Tide|Starwright|Pocket Kingdoms|Ashen Road|Tiny Harbour|Cosmic Courier|Mossgarden|Rail Baron 3"
    ),
    "platform2": _w("my old Switch|the PC|my phone|the PlayStation|the Steam Deck"),
    "podcast": _w(
        "Odd Histories|The Slow Kitchen|Money Talks Back|Deep Sea Diaries|Footnotes|Half-Time Chat|The Lab Bench|Small Town Crimes"
    ),
    "topic": _w(
        "medieval plagues|fermenting everything|paying off debt|octopuses|forgotten inventors|lower-league football|weird experiments|a 1970s heist"
    ),
    "dessert": _w(
        "a tiramisu|sticky toffee pudding|a pavlova|baklava|a cheesecake|brownies|a tarte tatin|churros"
    ),
    "occasion": _w(
        "the office bake sale|book club|the street party|Sunday lunch|the school fete|a leaving do|the quiz night|a picnic"
    ),
    "car": _w("the old Fiesta|the Corolla|Dad's van|the little scooter|the camper|the Golf"),
    "carfault": _w("a new clutch|two new tyres|a new exhaust|brake pads|a new battery|a wing mirror"),
    "class": _w(
        "first aid|sign language|wine tasting|bread making|coding|calligraphy|beekeeping|photography|Italian cooking|car maintenance"
    ),
    "teacher": _w(
        "a retired fireman|a very intense Swedish woman|a guy who looks about twelve|an old friend of my mum's|a former chef|a professional clown"
    ),
    "sport": _w("the darts final|the rugby|the cup final|the Grand Prix|the snooker|the tennis"),
    "result": _w(
        "screamed at the telly for an hour|lost a tenner on it|fell asleep at half time|ended up in a pub with strangers|won a bet against my dad"
    ),
    "item": _w(
        "a vintage lamp|a rocking chair|a box of old postcards|a leather jacket|a typewriter|a record player|a brass telescope|a ceramic owl"
    ),
    "market": _w("the car boot sale|the flea market|a charity shop|an estate sale|the antiques fair"),
    "price": _w("five quid|twelve pounds|thirty quid|two pounds fifty|forty pounds|a tenner"),
    "appliance": _w("washing machine|fridge|boiler|dishwasher|oven|toaster|kettle|laptop|shower|doorbell"),
    "breakdown": _w(
        "flooded the kitchen|started beeping at three in the morning|just died with a bang|has been making a grinding noise|caught fire, a tiny "
        "bit|stopped working on day one"
    ),
    "fnews": _w(
        "pregnant with her second|starting a PhD|training to be a pilot|opening a cafe|back from a year in Chile|learning the bagpipes|getting "
        "divorced|writing a novel"
    ),
    "town": _w("Whitby|Hebden Bridge|Tenby|Padstow|Rye|Ludlow|Keswick|Hay-on-Wye|Frome|Totnes|Cromer|Oban"),
    "townthing": _w(
        "a ridiculous amount of fudge|a second-hand bookshop the size of a barn|the windiest beach I've ever seen|a pub with a resident goat|a "
        "brilliant fish shop|a tiny museum of keys"
    ),
    "lent": _w(
        "a pasta machine|a camping stove|a drill|a wedding hat|a pressure washer|an inflatable kayak|a sewing kit|a projector screen"
    ),
    "dinner": _w("paella|a curry night|fondue|a barbecue|tacos|a roast|homemade pizza|a ramen evening"),
    "colour": _w("sage green|mustard yellow|dusty pink|navy|terracotta|pale lilac"),
}
# Everyday news: (turn, key list, answer list, single-hop question, paraphrase question); a key is
# drawn once per speaker, so a question naming it has one answer.
EVERYDAY = _t(
    "I made {y} for {x}'s birthday {when}, and nobody got food poisoning, so a win.~friend~dish~What did {p} cook for {x}'s birthday?~Which dish did "
    "{p} serve to celebrate {x}?|Have you watched {x}? I binged the whole thing on {y} {when}.~show~platform~Where did {p} watch {x}?~On which "
    "service did {p} stream {x}?|My {x} {y}, I'm ridiculously proud of it.~plant~plantnews~What happened with {p}'s {x}?~What news did {p} share "
    "about the {x} at home?|Office gossip: {x} {y}. Nobody saw that coming.~colleague~colnews~What is the news about {p}'s colleague {x}?~What did "
    "{p} report about the coworker {x}?|I've been playing {x} on {y} every night, it's dangerously addictive.~game~platform2~What is {p} playing {x} "
    "on?~Which device does {p} use for {x}?|I've been listening to {x}, the latest series is all about {y}.~podcast~topic~What is the latest series of the {x} podcast {p} follows about?~Which subject does {x} cover according to {p}?|I brought {y} to {x} {when} and it was gone in about ten "
    "minutes.~occasion~dessert~What did {p} bring to {x}?~Which sweet thing did {p} contribute at {x}?|Bad news, {x} failed its MOT {when} and needs "
    "{y}. Money pit.~car~carfault~What does {x} need after failing its MOT, according to {p}?~Which fix is {x} waiting on, according to {p}?|I started a {x} course on "
    "Wednesdays, the teacher is {y}.~class~teacher~Who teaches {p}'s {x} course?~What is the instructor of {p}'s {x} classes like?|Watched {x} {when} "
    "and {y}, what a day.~sport~result~What happened when {p} watched {x}?~How did {x} go for {p}?|Picked up {x} at {y} for {price}, the seller had "
    "no idea what it was worth.~item~market~Where did {p} find {x}?~At which kind of sale did {p} get {x}?|Had coffee with {x} {when}, and "
    "apparently she's {y} now. Who even is she?~friend~fnews~What is {x} up to these days, according to {p}?~Which new chapter has {x} started in life, as {p} heard it?|Our {x} {y}, so that's my weekend budget gone.~appliance~breakdown~What went wrong with {p}'s {x}?~What trouble did {p} report with the "
    "{x} at home?|We had a day trip to {x} {when}, found {y}, highly recommend.~town~townthing~What did {p} find in {x}?~Which discovery did {p} "
    "make on the outing to {x}?|{x} lent me {y} and I'm scared I'll break it before I give it back.~friend~lent~What did {x} lend {p}?~Which "
    "borrowed item from {x} is {p} nervous about?|{x} had us round for {y} {when}, I'm still full to be honest.~friend~dinner~What did {x} make when "
    "{p} came round?~Which meal did {x} host {p} for?|Helped {x} paint the nursery {when}, it's {y} now and somehow it works.~friend~colour~What "
    "colour did {p} and {x} paint the nursery?~Which shade did {p} help give the baby's room walls at {x}'s?"
)
# News carrying a code: (turn, answer list, identifier question).
CODED = (
    (
        "My parcel with {y} is stuck in customs, the tracking number is {c}, wish me luck.",
        _w("the new duvet|my running shoes|a birthday present for Mum|the spare charger|the board game"),
        "What was in {p}'s parcel {c}?",
    ),
    (
        "Got a parking fine, reference {c}, for leaving the car on {y} for ten minutes. Appealing it obviously.",
        _w(
            "Albion Road|Mercer Lane|Fenwick Street|Holloway Terrace|Quarry Hill|Larch Avenue|Cobden Street|Rosehip Close|Wharf Row|Beacon Hill Road"
        ),
        "Where was {p} parked when fine {c} was issued?",
    ),
    (
        "Our new wifi network is called {c}, because {y} insisted on choosing it.",
        _w("my flatmate|my partner|my little brother|the landlord"),
        "Who chose {p}'s wifi name {c}?",
    ),
    (
        "Entered the raffle at {y}, ticket {c}, and I've got a good feeling about it.",
        _w("the school fete|the rugby club|the hospice fundraiser|the village show"),
        "Where did {p} buy raffle ticket {c}?",
    ),
)
TAILS = _w(
    "Honestly, it's been that kind of month.|Anyway, that's my news, riveting stuff I know.|I'll send you photos later if I remember.|Don't tell "
    "anyone yet though, okay?|I still can't quite believe it, to be honest.|Life is weird sometimes, isn't it?|Mum obviously had opinions about it, "
    "as always.|Remind me to tell you the full story when we meet up.|My partner thinks I'm mad but whatever.|It was a whole saga, trust me.|So "
    "yeah, never a dull moment round here.|I'm trying not to get too excited about it."
)
FOLLOWUPS = _w(
    "How are you feeling about it all now?|Did you take any pictures at least?|What did everyone else think?|Was it as good as you hoped it would "
    "be?|How long has that been going on for?|Are you going to do it again, do you think?|Who else knows about it so far?|Do you want me to come "
    "round at the weekend?|What are you going to do next then?|I need every single detail next time we meet up, okay?|Please tell me you're going to "
    "celebrate properly.|Honestly, I don't know how you keep up with everything."
)
# Other ways of telling each EVERYDAY item, in the same order.
VARIANTS = _t(
    "It was {x}'s birthday {when} so I cooked {y}, which went down surprisingly well.~Cooked {y} for {x} {when} since it was her birthday, and she "
    "had thirds!|Finally started {x} on {y}, three episodes in and I'm hooked.~{x} is the best thing on {y} right now, I watched it all {when} in "
    "one go, no shame.|Plant update because I know you care: the {x} {y}.~You won't believe it but my {x} {y}. Gardening queen over here.|So {x} "
    "from work {y}. The whole floor is talking about it.~Did I tell you {x} {y}? Total shock, we're all still processing.|{x} has eaten my life, I "
    "play it on {y} until about two in the morning.~Currently obsessed with {x}, I've been playing it on {y} on the bus every day.|Put {x} on while "
    "cleaning, this season covers {y} and it's fascinating.~Got hooked on a podcast called {x}, they're doing a whole run on {y} at the moment.|Made "
    "{y} for {x} {when}, and people were literally fighting over the last slice.~My contribution to {x} was {y}, and I'm told it was the "
    "highlight.|{x} is off the road again, the garage says it needs {y}.~Took {x} in for its MOT {when}, failed, needs {y}. I could cry.|Signed up "
    "for {x} classes, and the teacher turns out to be {y}, it's brilliant.~My new {x} course started {when}, run by {y}. Best decision I've made all "
    "year.|Watched {x} {when} with the neighbours and {y}, no regrets.~{x} was on {when} and I {y}. Sport is bad for my health.|Found {x} at {y} for "
    "{price}, absolute bargain.~Look what I got at {y}: {x}, only {price}!|Bumped into {x} {when} and it turns out she's {y} these days.~Big news "
    "from {x}: she's {y}. I had no idea!|Disaster at home: the {x} {y}.~The {x} {y} {when}, so we're living like it's 1850 at the moment.|Went to "
    "{x} for the day {when} and found {y}. Lovely little place.~Day out in {x} {when}, the highlight was {y}.|Borrowed {y} from {x}, wish me luck "
    "keeping it in one piece.~{x} lent me {y} for the weekend, very trusting of her honestly.|Went round to {x}'s {when} for {y}, she really went "
    "all out.~{x} did {y} for a few of us {when}, such a nice evening.|Painted {x}'s nursery {y} {when}, and it looks better than I expected.~The "
    "nursery at {x}'s is {y} now, we painted it {when} and I'm covered in it still."
)
# Sentences the news of Story's methods is told in ({when} is a relative time, filled in per turn).
PET_1 = _w(
    "{o}I finally adopted that {b} I told you about {when}! His name is {n} and he already stole my spot on the couch.|{o}we brought home a {b} from "
    "the rescue {when}. We've called her {n}, and she's terrified of the hoover.|So there's a new member of the family, a {b} called {n}. Picked {n} "
    "up {when} and I'm completely smitten."
)
PET_2 = _w("ate a whole sock|swallowed a hair tie|hurt a paw on some glass|got stung by a wasp")
JOB_1 = _w(
    "{o}I got the job! I'm going to be a {r} at {c}, starting in two weeks.|I handed in my notice, I've accepted an offer from {c} as their new {r}. "
    "Terrified and thrilled in equal measure.|First week as a {r} at {c} is done and dusted. Everyone seems nice and the coffee is free, so far so "
    "good."
)
JOB_2 = _w(
    "My boss {b} {h}, and now half the office has been roped into it too.|You'd like my boss {b}, she {h} and tells the best stories about it at "
    "lunch."
)
RELATIVE_1 = _w(
    "My {r} {n} just moved to {c} to work as a {j}, so I've got a free place to stay now, ha.|{o}my {r} {n} has landed a {j} position in {c}! Mum is "
    "already crying about it."
)
RELATIVE_2 = _w(
    "Went to see {n} {when}, we just walked around {c} and ate far too much.|I was in {c} {when} visiting {n}, and the flat is so much nicer than "
    "the photos."
)
TRIP_1 = _w(
    "Just got back from {c} with {w} {when}, {d}.|{o}{w} and I flew home from {c} {when}. {D}, and I'm already planning to go back.|{c} was "
    "incredible! We came back {when}, me and {w}, and {d}."
)
PLAN_1 = _w(
    "Remember the {a} plan? That's off now, we're going to {b} instead because {r}.|Change of plans, forget {a}, it's {b} now, {r}. Sigh."
)
PURCHASE_1 = _w(
    "{o}I caved and bought the {b} {k} {t}, {op}.|New toy alert: a {b} {t}, the {k} model. Got it in the sale {when} {op}."
)
PURCHASE_2 = _w(
    "The {t} I bought has packed in already, so it's going back to the shop.|Remember my new {t}? Dead. Completely dead. I'm on hold with customer "
    "service right now."
)
BOOK_1 = _w("couldn't put it down|found it a bit slow|cried at the ending|loved it")
BOOK_2 = _w(
    "Finished {t} by {a} {when}, I {v}. You should borrow it.|I'm reading {a} at the moment, {t}, and honestly I {v}."
)
HEALTH_1 = _w(
    "I {d} {how} {when}, so I'm hobbling about feeling sorry for myself.|Don't laugh, but I {d} {when} {how}. The doctor said rest for two weeks."
)


# Relative time phrases said in a turn, and the day each points at.
RELATIVE = ("yesterday", "two days ago", "last weekend", "earlier today", "")
MONTHS = "January February March April May June July August September October November December".split()


def resolve(phrase: str, day: date) -> date:
    "The day a relative time phrase said on `day` points at."
    if phrase == "yesterday":
        return day - timedelta(days=1)
    if phrase == "two days ago":
        return day - timedelta(days=2)
    if phrase == "last weekend":
        return day - timedelta(days=(day.weekday() - 5) % 7 or 7)
    return day


def month_of(day: date) -> str:
    return f"{MONTHS[day.month - 1]} {day.year}"


CHITCHAT = sorted(
    set(GREETING_REPLIES + REACTIONS + FOLLOWUPS + PROMPTS + SMALL_TALK + CLOSINGS + CLOSING_REPLIES)
    | {g.format(o=n) for g in GREETINGS for n in FIRST_NAMES},
    key=len,
    reverse=True,
)


def is_chitchat(content: str) -> bool:
    "Whether a turn is only greetings, reactions, questions back or small talk, telling nothing."
    said = content.split(": ", 1)[1]
    for line in CHITCHAT:
        said = said.replace(line, "")
    return not said.strip()


REPEATS = {
    "trip": 5,
    "purchase": 4,
    "book": 3,
    "film": 3,
    "concert": 3,
    "food": 3,
    "health": 2,
    "activity": 4,
    "rare_trip": 3,
}
FACTS = ("pet", "job", "relative", "plan", "move", "hobby")

GROUP_QUESTIONS = {
    "books": "Which books did {p} mention reading?",
    "films": "Which films did {p} see at the cinema?",
    "bands": "Which bands did {p} see live?",
}

# A friend told about in two everyday turns: how the first turn picks her out, and the second turn's question.
FRIEND_LINKS = {
    0: ("the friend {p} cooked {y} for", "What did {p} cook for the birthday of {who}?"),
    11: ("the friend who is {y} these days", "What is {who} up to, according to {p}?"),
    14: ("the friend who lent {p} {y}", "What did {who} lend {p}?"),
    15: ("the friend who had {p} round for {y}", "What meal did {who} make when {p} came round?"),
    16: ("the friend whose nursery {p} painted {y}", "What colour did {p} paint the nursery of {who}?"),
}
TAILS += _w(
    "Not that anyone asked, ha.|Classic me, honestly.|Swear I'm not making this up.|Will explain properly on Sunday.|"
    "Send wine, basically.|Anyway, moving on before I get emotional.|Honestly it could only happen to me.|"
    "I'm choosing to see it as character building.|That's the headline, details to follow.|Small victories, right?|"
    "You can laugh, I did eventually.|Adulting is exhausting, I tell you."
)
