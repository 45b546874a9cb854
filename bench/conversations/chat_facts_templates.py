"""Threads of the chat_facts set other than hobbies: people, pets, work, trips, plans, health, events, and
one-off facts. Same line format as chat_facts_vocab.HOBBIES (see its docstring).

A person thread introduces someone by relation in a fact about the friend, then tells something about that
person in a fact that names only them, as an extraction step does when a friend talks about their family;
the "v" question joins the two. A filler's attributes name threads it would contradict.
"""

PEOPLE = """
# person sister f | sister
> {N}'s sister {R} has just moved to {town} for a fresh start after her divorce. || {N} mentioned that {his} sister {R} relocated to {town} after her divorce.
> {R} works night shifts as a nurse on a children's ward and sleeps through most afternoons.
> {N} spent a long weekend with {his} sister in {town} and they went to a flea market.
? s 0 | Where did {N}'s sister move to? | {town}
? v 0,1 | What does {N}'s sister do for a living? | She is a nurse on a children's ward, working night shifts
? t 2 | When did {N} visit {his} sister in {town}?
? p 0 | Which sibling of {N} changed cities recently, and why? | {His} sister {R}, after her divorce
# person brother m | brother
> {N}'s younger brother {R} is starting university in {town} to study engineering.
> {R} failed his driving test for the third time, this time on a roundabout.
> {R} has switched from engineering to philosophy, and their parents are not pleased.
? s 0 | Which city is {N}'s younger brother going to university in? | {town}
? v 0,1 | How many times has {N}'s brother failed his driving test? | Three times
? v 0,2 | What subject is {N}'s brother studying now? | Philosophy, after switching from engineering
# person mother f | mother
> {N}'s mother {R} retired from teaching maths after thirty-one years at the same school. || {N} says {his} mother {R} has stopped teaching maths after three decades at one school.
> {R} has taken up ballroom dancing and competes with a partner twenty years younger.
> {N} is worried about {his} mother, who fell in the garden and hurt her wrist.
? s 0 | What did {N}'s mother do before she retired? | She taught maths for thirty-one years
? v 0,1 | What new pastime has {N}'s mother taken up? | Ballroom dancing, with a much younger partner
? p 2 | Why is {N} anxious about a parent? | {His} mother fell in the garden and hurt her wrist
? t 2 | When did {N}'s mother hurt her wrist?
# person father m | father
> {N}'s father {R} is recovering well from a knee replacement and already walking the dog again.
> {R} has been restoring a vintage motorbike in his shed for the last two years.
> {N} helped {his} father clear out the attic and found {his} old school reports.
? s 0 | What operation did {N}'s father have? | A knee replacement
? v 0,1 | What project has {N}'s father been working on in his shed? | Restoring a vintage motorbike
? p 2 | What did {N} discover while tidying the loft with a parent? | {His} old school reports
? t 2 | When did {N} help {his} father clear out the attic?
# person grandmother f | grandmother
> {N}'s grandmother {R} turned ninety and the whole family gathered in {town} to celebrate. || {N} talked again about the ninetieth birthday of {his} grandmother {R}, which brought the family to {town}.
> {R} still swims in the sea every morning and refuses to use a walking stick.
> {N} is recording {his} grandmother's stories about growing up so they are not forgotten.
? s 0 | How old did {N}'s grandmother turn? | Ninety
? v 0,1 | What does {N}'s grandmother still do every morning? | She swims in the sea
? p 2 | What family history project has {N} begun? | Recording {his} grandmother's stories of growing up
# person cousin x | cousin
> {N}'s cousin {R} is getting married in {town} and asked {N} to give a speech.
> {R} runs a small vegan bakery that was just featured in a national newspaper.
> {N} gave the speech at {his} cousin's wedding and made everyone laugh with a story about a canoe.
? s 0 | What did {N}'s cousin ask {him} to do at the wedding? | Give a speech
? v 0,1 | What kind of business does {N}'s cousin run? | A small vegan bakery, recently in a national newspaper
? t 2 | When did {N} give the speech at {his} cousin's wedding?
? p 2 | How did {N}'s toast go down with the guests? | Everyone laughed at a story about a canoe
? d 0,2 | How long after being asked did {N} give the wedding speech?
# person aunt f | aunt
> {N}'s aunt {R} lives on a farm near {town} and sends {him} jars of honey every autumn.
> {R} has started renting out a cottage on the farm to holidaymakers.
> {N} stayed with {his} aunt on the farm and helped collect honey from the hives.
? s 0 | What does {N}'s aunt send {him} each year? | Jars of honey
? v 0,1 | What new side business has {N}'s aunt started? | Renting out a cottage on the farm to holidaymakers
? t 2 | When did {N} stay at {his} aunt's farm?
? p 2 | What chores did {N} do on a relative's rural property? | Helped collect honey from the hives
# person uncle m | uncle
> {N}'s uncle {R} invited {him} to spend a week on his boat along the coast near {town}.
> {R} worked as a ship's cook for twenty years before opening a fish restaurant.
> {N} caught {his} first mackerel on {his} uncle's boat and grilled it on the beach.
? v 0,1 | What did {N}'s uncle do before opening his restaurant? | He was a ship's cook for twenty years
? s 0 | Where did {N}'s uncle invite {him} to spend a week? | On his boat along the coast near {town}
? p 2 | What did {N} reel in at sea, and how was it cooked? | {His} first mackerel, grilled on the beach
? t 2 | When did {N} catch {his} first mackerel?
# person bestfriend x | best friend
> {N}'s best friend from school, {R}, is moving to {town} for a job and {N} is gutted. || {N} is still upset that {his} old school friend {R} is relocating to {town} for work.
> {R} has been offered a role as a sound engineer for a touring theatre company.
> {N} threw a leaving party for {R} with a cake shaped like a suitcase.
? s 0 | Why is {N} upset about {his} best friend? | {R} is moving to {town} for a job
? v 0,1 | What job has {N}'s best friend been offered? | Sound engineer for a touring theatre company
? p 2 | How did {N} say goodbye to a close pal? | With a leaving party and a suitcase-shaped cake
? t 2 | When did {N} throw the leaving party for {R}?
# person colleague x | colleague
> {N}'s colleague {R} covered for {him} during a crisis at work and {N} owes {rhim} a dinner.
> {R} is leaving the company in the spring to open a bike repair shop.
> {N} finally took {R} out for dinner at a Georgian restaurant to say thanks.
? v 0,1 | What is {N}'s colleague planning to do after leaving the company? | Open a bike repair shop
? s 0 | Why does {N} owe {his} colleague a dinner? | {R} covered for {him} during a crisis at work
? p 2 | Where did {N} take a coworker to show gratitude? | To a Georgian restaurant
? d 0,2 | How long after {R} covered for {N} did {N} repay the favour with dinner?
# person manager x | manager
> {N}'s manager {R} keeps scheduling meetings at half past five, which {N} finds maddening.
> {R} is taking a year of unpaid leave to sail around the Mediterranean with family.
? s 0 | What annoys {N} about {his} manager? | Meetings scheduled at half past five
? v 0,1 | Why will {N}'s manager be away for a year? | Sailing around the Mediterranean on unpaid leave
? p 0 | Which habit of {N}'s boss drives {him} up the wall? | Scheduling meetings at half past five
# person neighbour x | neighbour
> {N}'s neighbour {R} leaves homemade soup on {his} doorstep whenever {he} is ill.
> {R} has lived in the building for forty years and knows the history of every flat.
> {N} is helping {his} neighbour {R} set up video calls with grandchildren abroad.
? s 0 | What does {N}'s neighbour do when {he} is unwell? | Leaves homemade soup on the doorstep
? v 0,1 | How long has {N}'s neighbour lived in the building? | Forty years
? p 2 | What tech support is {N} giving someone next door? | Setting up video calls with grandchildren abroad
# person partner x | partner
> {N}'s partner {R} proposed during a walk along the river and {N} said yes. || {N} is engaged to {his} partner {R}, who proposed on a riverside walk.
> {R} is a paramedic and has just been promoted to lead a team of twelve.
> {N} and {R} have booked a registry office date and a small lunch for close family.
? s 0 | How did {N}'s partner propose? | During a walk along the river
? v 0,1 | What does {N}'s partner do for work? | A paramedic, recently promoted to lead a team of twelve
? p 2 | How modest will {N}'s big day be? | A registry office ceremony and a small lunch for close family
# person flatmate x | flatmate
> {N}'s flatmate {R} plays trombone at odd hours, so {N} has bought earplugs.
> {R} is training to become a firefighter and runs up the stairs with a loaded backpack.
> {N} and {his} flatmate {R} finally agreed on a cleaning rota after months of arguments.
? s 0 | What did {N} buy because of {his} flatmate? | Earplugs, because {R} plays trombone at odd hours
? v 0,1 | What career is {N}'s flatmate training for? | Firefighting
? p 2 | How did {N} settle the housework dispute at home? | They agreed on a cleaning rota
? t 2 | When did {N} and {his} flatmate agree on a cleaning rota?
# person oldfriend x | university friend
> {N} met up with {his} university friend {R}, who was visiting {city} for a conference.
> {R} has just published a novel about a lighthouse keeper on a remote island.
> {N} went to {R}'s book launch in {town} and got a signed copy.
? v 0,1 | What has {N}'s university friend recently published? | A novel about a lighthouse keeper on a remote island
? s 0 | Why was {N}'s university friend in {city}? | For a conference
? t 2 | When did {N} go to {R}'s book launch?
? p 2 | What souvenir did {N} bring home from a literary event? | A signed copy of the novel, from the launch in {town}
"""

PETS = """
# pet cat | a grey tabby cat called {pet}
> {N} adopted a grey tabby cat from a shelter and named her {pet}. || {N} has a new grey tabby from the shelter, called {pet}.
> {N} took {pet} to the vet after she stopped eating for two days; it was a mild infection.
> {N} bought {pet} a tall scratching post after she shredded the arm of the sofa.
> {N} says {pet} now sleeps on {his} laptop keyboard whenever {he} tries to work from home.
? s 0 | What pet did {N} get from the shelter? | A grey tabby cat called {pet}
? p 0 | Which animal came to live with {N}? | A grey tabby cat named {pet}
? s 1 | Why did {N} take {pet} to the vet? | She stopped eating for two days; a mild infection
? p 2 | Why did {N} have to protect {his} couch? | {pet} shredded it, so {he} bought a scratching post
? d 0,1 | How long after adopting {pet} did {N} first take her to the vet?
? o 0,3 | Is {N} likely to be allergic to cats? | Unlikely: {he} adopted a tabby who sleeps on {his} keyboard
# pet dog | a rescue greyhound called {pet}
> {N} adopted a rescue greyhound called {pet} who is terrified of stairs. || {N}'s rescue greyhound {pet} is still too scared to climb the stairs.
> {N} signed {pet} up for obedience classes because he pulls so hard on the lead.
> {N} takes {pet} for a long walk by the river every morning before work.
> {N} says {pet} stole a whole roast chicken off the counter during a family lunch.
? s 0 | What breed is {N}'s dog? | A rescue greyhound named {pet}
? p 3 | What did {N}'s pet snatch while relatives were eating? | A whole roast chicken off the counter
? t 1 | When did {N} sign {pet} up for obedience classes?
? s 1 | Why is {N}'s dog going to obedience classes? | He pulls hard on the lead
? o 0,2 | Would {N} prefer a holiday cottage that welcomes dogs? | Yes: {he} walks {his} greyhound {pet} every morning
? p 0 | What is {N}'s companion afraid of? | Stairs
# pet rabbit | two rabbits, {pet} and {pet2}
> {N} took in two rabbits, {pet} and {pet2}, from a friend who moved abroad.
> {N} built a run in the garden so {pet} and {pet2} can dig without escaping.
> {N} had to rush {pet2} to an emergency vet after he chewed through a phone charger cable.
> {N} says the rabbits have learned to come when {he} shakes a bag of dried herbs.
? s 0 | What are the names of {N}'s rabbits? | {pet} and {pet2}
? p 1 | What did {N} construct outdoors for the bunnies? | A run in the garden
? t 2 | When did {N} rush {pet2} to the emergency vet?
? s 2 | Why did {N} take {pet2} to an emergency vet? | He chewed through a phone charger cable
# pet tortoise | a tortoise called {pet}
> {N} inherited a forty-year-old tortoise called {pet} from {his} great-uncle.
> {N} bought a heat lamp for {pet} and says the tortoise now follows the sunny patch around the room.
> {N} is preparing {pet} for hibernation in a box of shredded paper in a cool cupboard.
? s 0 | How did {N} come to own a tortoise? | {He} inherited {pet} from {his} great-uncle
? p 2 | How is {N} getting the reptile ready for winter? | A box of shredded paper in a cool cupboard, for hibernation
? t 0 | When did {N} inherit {pet}?
# pet budgie | two budgies, {pet} and {pet2}
> {N} bought a pair of budgies, {pet} and {pet2}, and the flat is now much louder.
> {N} says {pet} has learned to imitate the microwave beep and does it all day.
> {N} left the budgies with a neighbour while travelling, and they came back whistling a pop song.
? s 0 | What birds did {N} get? | A pair of budgies, {pet} and {pet2}
? p 1 | What sound does one of {N}'s pets copy? | The microwave beep
? t 0 | When did {N} get the budgies?
"""

LIFE = """
# job change | job
> {N} works as {job} at {work} in {city} and has been there for four years. || {N} has spent four years at {work} in {city}, working as {job}.
> {N} feels stuck at work since {his} team was cut in half and the workload doubled.
> {N} had a second interview for a position as {job2} and thinks it went well.
> {N} accepted an offer to work as {job2} at {work2} and hands in {his} notice tomorrow.
> {N} says the new job is a better fit, though the commute is forty minutes longer.
? s 0 | Where did {N} work before changing jobs? | At {work} in {city}, as {job}
? m 0,3 | What jobs has {N} held? | {job} at {work}, then {job2} at {work2}
? t 3 | When did {N} accept the offer at {work2}?
? d 2,3 | How long after the second interview did {N} accept the job offer?
? p 1 | Why is {N} unhappy with {his} employer? | {His} team was cut in half and the workload doubled
? p 4 | How is {N} finding the switch so far? | A better fit, though the commute is forty minutes longer
? o 0,3 | What might {N} study if {he} went back to school? | Something in {field} or {field2}, given {his} work as {job} and then {job2}
# worktrips | work trips
> {N} flew to {wcity} for a two-day workshop with a client and hated the hotel.
> {N} spent most of the week at a trade fair in {wcity2} for work and barely slept.
> {N} is back from a work trip to {wcity3}, where {he} gave {his} first conference talk.
? m 0,1,2 | Where has {N} travelled for work? | {wcity}, {wcity2} and {wcity3}
? t 2 | When did {N} give {his} first conference talk?
? p 1 | Why was {N} so tired during that business exhibition? | {He} barely slept during a week at a trade fair in {wcity2}
? s 0 | What did {N} dislike about the client workshop trip? | The hotel
# trip birthday | trip
> {N} booked a week in {place} for {his} birthday and has planned every day of it. || {N} has a birthday week in {place} booked, with each day already planned.
> {N} got back from {place} and said the highlight was {sight}.
? s 0 | Where is {N} spending {his} birthday week? | {place}
? t 1 | When did {N} get back from {place}?
? p 1 | What did {N} enjoy most on that holiday? | {sight}
# trip friends | trip
> {N} is going to {place} with three friends from university and they rented a flat together.
> {N} said the trip to {place} was wonderful apart from losing {his} passport on the last day.
? s 1 | What went wrong on {N}'s trip to {place}? | {He} lost {his} passport on the last day
? t 1 | When did {N} lose {his} passport on holiday?
? p 0 | Who is {N} holidaying with, and where are they staying? | Three university friends, in a rented flat in {place}
# trip solo | trip
> {N} went to {place} on {his} own for the first time and loved the freedom.
> {N} is still talking about {sight} from {his} solo trip to {place}.
? s 0 | Where did {N} travel alone? | {place}
? p 0 | How did {N} find going somewhere without company? | {He} loved the freedom of a solo trip to {place}
? t 0 | When did {N} take {his} solo trip to {place}?
? s 1 | What does {N} keep talking about from {his} solo trip? | {sight}
# plan tripdelay | trip plan
> {N} is planning a two-week trip to {place} and has started saving for the flights.
> {N} postponed the trip to {place} because {his} company froze all leave until further notice.
> {N} has rebooked the trip to {place} for later in the year, and this time the flights are paid for.
? m 0,1,2 | What has happened to {N}'s plan to visit {place}? | Planned, postponed when {his} company froze leave, then rebooked with flights paid
? t 1 | When did {N} postpone the trip to {place}?
? s 1 | Why did {N} put off {his} trip to {place}? | {His} company froze all leave
? d 1,2 | How long after postponing did {N} rebook the trip to {place}?
# plan course | course plan
> {N} signed up for an evening course in interior design at the local college.
> {N} dropped out of the interior design course after two weeks because it clashed with work.
? m 0,1 | Did {N} complete the interior design course? | No: {he} signed up but dropped out after two weeks because it clashed with work
? t 1 | When did {N} drop out of the interior design course?
? p 1 | Why did {N} quit those evening studies? | They clashed with work
? o 0 | Would {N} enjoy a home decor fair? | Probably: {he} signed up for an interior design course
# plan move | move plan
> {N} is thinking about leaving {city} for a quieter town by the sea, mostly because of rents.
> {N} has decided to stay in {city} after all, as coastal rents turned out to be just as high.
? m 0,1 | Is {N} still planning to leave {city}? | No: {he} considered a town by the sea but rents there were just as high
? t 1 | When did {N} decide to stay in {city}?
? p 1 | What changed {N}'s mind about relocating? | Rents by the coast were just as high
# plan concert | concert plan
> {N} bought tickets to see {band} play in {town} with two friends.
> {N} was gutted that the {band} concert was cancelled because the singer lost her voice.
> {N} got a refund for the {band} tickets and put the money towards a new coat.
? m 0,1 | Did {N} get to see {band} in {town}? | No: {he} had tickets but the concert was cancelled
? t 1 | When did {N} hear the {band} concert was cancelled?
? s 2 | What did {N} spend the {band} refund on? | A new coat
? p 1 | Why was the show {N} was looking forward to called off? | The singer lost her voice
# plan party | party plan
> {N} is organising a surprise fortieth birthday party for a friend in a rented barn.
> {N} had to move the surprise party to a pub because the barn flooded.
> {N} said the surprise party went perfectly and the guest of honour cried.
? m 0,1 | Where was the surprise party {N} organised finally held? | In a pub, because the barn {he} had rented flooded
? t 2 | When did the surprise party {N} organised take place?
? p 2 | How did the celebration {N} arranged turn out? | Perfectly; the guest of honour cried
# health ankle | ankle
> {N} sprained {his} ankle stepping off a tram and has to keep it raised for a week. || {N} is still resting the ankle {he} twisted getting off a tram.
> {N} started physiotherapy for {his} ankle twice a week near the office.
> {N} can walk without the ankle brace again and says it feels almost normal.
? m 0,1,2 | How has {N}'s ankle injury progressed? | Sprained getting off a tram, physiotherapy twice a week, now walking without the brace
? t 0 | When did {N} sprain {his} ankle?
? p 1 | What treatment is {N} getting for the joint? | Physiotherapy twice a week
? d 0,2 | How long after spraining {his} ankle could {N} walk without a brace?
# health sleep | sleep
> {N} has been sleeping badly and waking at four every night, worrying about work.
> {N} stopped looking at {his} phone after ten and says {his} sleep has improved.
? m 0,1 | What sleep trouble has {N} had, and what helped? | Waking at four from work worries; no phone after ten helped
? p 1 | What habit change helped {N} rest better? | No phone after ten at night
? o 0,1 | Would {N} welcome tips for winding down before bed? | Probably: {he} has struggled with sleep and changed {his} evening habits
# health allergy | allergy
> {N} found out {he} is allergic to shellfish after a scary reaction at a seafood restaurant.
> {N} now carries an adrenaline pen everywhere and checks every menu twice.
? s 0 | What is {N} allergic to? | Shellfish
? o 0,1 | Would {N} enjoy a prawn and lobster tasting menu? | No: {he} is allergic to shellfish and carries an adrenaline pen
? t 0 | When did {N} find out about {his} allergy?
? p 1 | What emergency medicine does {N} keep on {him}? | An adrenaline pen
# health back | back
> {N} has had lower back pain from hunching over a laptop and bought a standing desk. || {N} says the standing desk {he} got for {his} aching lower back is helping.
> {N} does the stretches {his} physio gave {him} every morning, and {his} back pain has mostly gone.
? m 0,1 | What has {N} done about {his} back pain? | Bought a standing desk and does daily stretches from a physio
? s 0 | What caused {N}'s back pain? | Hunching over a laptop
? p 1 | Is {N}'s spine still hurting? | Mostly not; the daily stretches have helped
? o 0 | Would {N} appreciate an ergonomic chair? | Likely: {he} has had back pain from hunching over a laptop
# health eyes | eyes
> {N} got {his} first pair of glasses after months of headaches from squinting at screens.
> {N} keeps losing {his} new glasses and once found them in the fridge.
? s 0 | Why did {N} get glasses? | Months of headaches from squinting at screens
? p 1 | Where did {N} discover {his} missing spectacles? | In the fridge
? t 0 | When did {N} get {his} first glasses?
"""

# One-off facts: purchases, feelings, opinions, small happenings. "+[key ...]" names threads a fact would
# contradict, so the two are never drawn for the same friend.
FILLERS = """
+ {N} bought a used espresso machine and now makes coffee for {his} colleagues every morning. || {N} keeps mentioning the used espresso machine {he} got, and {his} coworkers love the morning brews.
? s 0 | What did {N} buy for making coffee? | A used espresso machine
+ {N} thinks the new tram line in {city} has made {his} commute twenty minutes shorter.
? s 0 | What does {N} think of the new tram line in {city}? | It has cut twenty minutes off {his} commute
+ {N} feels burned out after three months of back-to-back deadlines and wants a quiet weekend.
? p 0 | Why is {N} exhausted lately? | Three months of back-to-back deadlines
+ {N} repainted {his} kitchen a deep green and finally put up the shelves {he} bought last year.
? s 0 | What colour did {N} paint {his} kitchen? | Deep green
+ {N} has become a vegetarian and says {he} does not miss meat except for bacon. || {N} is sticking with vegetarian food and misses only bacon.
? o 0 | Would {N} enjoy a steakhouse dinner? | Probably not: {he} has become a vegetarian
? p 0 | What does {N} crave since changing diet? | Bacon
+ {N} is saving for a deposit on a flat and has cut back on eating out.
? s 0 | What is {N} putting money aside for? | A deposit on a flat
? o 0 | Would {N} be keen on a pricey tasting menu right now? | Probably not: {he} is saving for a deposit
+ {N} bought noise-cancelling headphones to survive the chatter of the open-plan office.
? p 0 | Why did {N} get new earphones? | To cope with a noisy office
+ {N} says {he} prefers winter to summer because {he} hates the heat.
? o 0 | Would {N} enjoy a beach holiday during a heatwave? | Unlikely: {he} hates the heat
+ {N} finally passed {his} driving test on the fourth attempt and celebrated with pizza.
? s 0 | How many attempts did it take {N} to pass {his} driving test? | Four
? t 0 | When did {N} pass {his} driving test?
+ {N} is reading a long Russian novel and is determined to finish it by the end of the year.
? p 0 | Which lengthy book is {N} working through? | A long Russian novel
+ {N} thinks remote work suits {him} better because {he} can walk at lunchtime.
? s 0 | Why does {N} prefer working from home? | {He} can walk at lunchtime
+ {N} bought a secondhand sofa online and it turned out to be far too big for the door.
? p 0 | What problem came with {N}'s recent furniture purchase? | The sofa was too big for the door
+ {N} is nervous about giving a presentation to the whole company next week.
? s 0 | What is {N} nervous about at work? | A presentation to the whole company
+ {N} volunteers at a food bank every other Saturday morning. || {N} still helps out at the food bank on alternate Saturday mornings.
? p 0 | How does {N} give back to the community? | Volunteering at a food bank
? o 0 | Would {N} likely help with a neighbourhood fundraiser? | Likely: {he} volunteers at a food bank
+ {N} says {he} cannot stand horror films and watched one through {his} fingers.
? o 0 | Would {N} enjoy a horror movie marathon? | No: {he} cannot stand horror films
+ {N} is hooked on a podcast about unsolved mysteries and listens to it on {his} commute.
? s 0 | What podcast is {N} into? | One about unsolved mysteries
? o 0 | Would {N} enjoy a true crime book? | Probably: {he} loves a podcast about unsolved mysteries
+ {N} lost {his} wallet on the bus and a stranger returned it with every card inside.
? p 0 | Did {N} recover the item {he} misplaced on public transport? | Yes, a stranger returned the wallet intact
? t 0 | When did {N} lose {his} wallet on the bus?
+ {N} moved into a bigger flat with a balcony on the top floor of an old building in {city}. || {N} keeps praising the roomier top-floor flat with a balcony {he} moved into.
? s 0 | What is {N}'s new flat like? | Bigger, on the top floor, with a balcony
+ {N} thinks {city} has too many tourists in summer and avoids the old town until autumn.
? o 0 | Would {N} want to visit the old town of {city} at the height of summer? | No: {he} avoids it because of the tourists
+ {N} bought a vintage film camera at a flea market and is shooting a roll of black and white film.
? p 0 | What old-fashioned device did {N} pick up at a second-hand stall? | A vintage film camera
+ {N} has been drinking less coffee since {his} doctor mentioned {his} blood pressure.
? s 0 | Why has {N} cut down on coffee? | {His} doctor mentioned {his} blood pressure
+ {N} went to a friend's housewarming and accidentally broke a glass vase in the first ten minutes.
? p 0 | What mishap did {N} cause at a party in someone's new home? | {He} broke a glass vase
+ {N} thinks the best pizza in {city} comes from a tiny place run by two brothers.
? s 0 | Which pizzeria does {N} rate highest in {city}? | A tiny place run by two brothers
+ {N} donated blood for the first time and was proud of not fainting.
? t 0 | When did {N} first donate blood?
? p 0 | What charitable medical act did {N} manage without passing out? | Donating blood
+ {N} has been meditating for ten minutes each morning and feels calmer at work. || {N} sticks with a short morning meditation and says work feels calmer.
? o 0 | Would {N} be interested in a silent retreat? | Possibly: {he} meditates every morning and finds it calming
+ {N} ordered a mechanical keyboard and now types so loudly that people on calls complain.
? s 0 | Why do people on calls complain about {N}? | {His} loud mechanical keyboard
+ {N} is proud that {he} has not bought any new clothes for six months.
? p 0 | What shopping challenge has {N} kept up for half a year? | No new clothes
+ {N} says {his} favourite restaurant in {city} has closed and {he} is genuinely grieving.
? s 0 | Why is {N} sad about {his} favourite restaurant? | It has closed
+ {N} found out through a DNA test that {he} has distant relatives in Argentina.
? p 0 | What surprise did {N}'s genetic kit reveal? | Distant relatives in Argentina
+ {N} thinks electric scooters should be banned from pavements after one clipped {his} elbow.
? s 0 | What is {N}'s view on electric scooters? | They should be banned from pavements
+ {N} bought an expensive raincoat and it leaked on the very first day.
? p 0 | How did {N}'s pricey waterproof jacket perform? | It leaked straight away
+[birthday] {N} celebrated {his} birthday with a picnic in the park and a cake from {his} favourite bakery.
? t 0 | When did {N} have {his} birthday picnic?
+ {N} gets anxious on planes and takes a sleeping tablet on any flight over two hours.
? o 0 | Would {N} enjoy a long-haul flight? | Not much: {he} gets anxious on planes
+ {N} believes handwritten letters beat messages and writes to {his} grandfather every month.
? s 0 | Who does {N} write handwritten letters to? | {His} grandfather
+ {N} had a filling at the dentist and could not feel {his} face for hours.
? t 0 | When did {N} have a filling at the dentist?
+ {N} won a raffle at work and took home a basket of cheese and wine.
? p 0 | What prize did {N} receive in a draw? | A basket of cheese and wine
+[sleep] {N} admits {he} spends far too long scrolling on {his} phone before bed.
? s 0 | What bad habit does {N} admit to at bedtime? | Scrolling on {his} phone
+ {N} has started taking the stairs instead of the lift to {his} fifth-floor office.
+ {N} bought {his} first house plant, a fiddle-leaf fig, and is anxious about keeping it alive.
? s 0 | What kind of plant did {N} buy? | A fiddle-leaf fig
+ {N} thinks the local library is the most underrated place in {city}.
? p 0 | Which public building does {N} feel gets too little credit? | The local library
+ {N} has been feeling homesick lately and misses {his} mother's cooking.
? o 0 | Would {N} appreciate a home-cooked family meal? | Yes: {he} is homesick and misses {his} mother's cooking
+ {N} took a day off to do nothing at all and spent it watching old cartoons.
+ {N} wants to learn to sail one day and has been watching sailing videos at night.
? o 0 | Would {N} enjoy a weekend on a sailing boat? | Yes: {he} wants to learn to sail
+ {N} got locked out of {his} flat in the rain and waited two hours for a locksmith.
? t 0 | When did {N} get locked out of {his} flat?
? p 0 | What was {N}'s ordeal in the downpour? | Locked out, waiting two hours for a locksmith
+ {N} says the best thing {he} bought this year is a heated blanket.
? s 0 | What does {N} call {his} best purchase this year? | A heated blanket
+ {N} joined a book club at the library and the first pick was a thriller set in Oslo.
? s 0 | What was the first book club pick for {N}? | A thriller set in Oslo
+ {N} was stuck on a delayed train for four hours and made friends with a retired sailor.
? p 0 | Who did {N} meet during a long rail hold-up? | A retired sailor
? t 0 | When was {N} stuck on the delayed train?
+ {N} finally fixed the dripping tap in {his} bathroom by following a video tutorial.
? s 0 | How did {N} fix the dripping tap? | By following a video tutorial
+ {N} has been writing a diary every night since the start of the year.
+ {N} got a tattoo of a small swallow on {his} wrist to mark a difficult year.
? p 0 | What body art did {N} have done? | A small swallow on the wrist
? t 0 | When did {N} get {his} tattoo?
+ {N} cut {his} hair very short and says {he} regrets it a little.
? p 0 | How does {N} feel about {his} new haircut? | {He} regrets the very short cut a little
+ {N} thinks the summer festival in {city} has become far too commercial.
+ {N} found a twenty-euro note in an old coat and spent it on flowers for {his} flat.
? s 0 | What did {N} spend the money {he} found in an old coat on? | Flowers for {his} flat
+ {N} says {he} is trying to be kinder to {himself} after a hard few months.
+ {N} bought a new laptop after spilling tea on the old one during a video call. || {N} is still annoyed about the tea {he} spilled on {his} old laptop mid-call, which forced a new purchase.
? s 0 | Why did {N} need a new laptop? | {He} spilled tea on the old one during a video call
+ {N} thinks people in {city} are friendlier than where {he} grew up.
+ {N} took {his} niece to an aquarium and she named every fish after a cartoon character.
? t 0 | When did {N} take {his} niece to the aquarium?
+ {N} is trying to cut down on sugar and swapped fizzy drinks for sparkling water.
? p 0 | Which replacement has {N} made to be healthier? | Sparkling water instead of fizzy drinks
+ {N} had {his} bike stolen from outside the station and is furious about it.
? s 0 | What was stolen from {N} outside the station? | {His} bike
+ {N} hosted a board game night and a game of Monopoly ended two friendships for the evening.
? t 0 | When did {N} host the board game night?
+ {N} says {his} landlord finally fixed the heating after three weeks of cold showers.
? p 0 | How long was {N} without warm water at home? | Three weeks
+ {N} enjoyed a film about a Mongolian horse race so much that {he} saw it twice.
? o 0 | Would {N} enjoy a documentary about nomadic life? | Probably: {he} loved a film about a Mongolian horse race
"""
