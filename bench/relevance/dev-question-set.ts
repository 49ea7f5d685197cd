/**
 * A development set of questions (bench/relevance/social-set.ts reports it as `dev`): one question
 * per topic of the demo's catalog, written in everyday words by phrasing families (how do I, any
 * tips, is it worth, why does my, X or Y), independently of the held-out set (paraphrase-set.ts),
 * which it was written without seeing. Relevance changes may be tuned on it; the held-out set
 * stays the judge.
 */

/** Topic id → a question about it in everyday words. */
export const DEV_QUESTIONS: Readonly<Record<string, string>> = {
  // skincare
  night_skincare_routine: 'what order should I put stuff on my face before bed?',
  morning_skincare_routine: "what's the easiest way to look after my skin before work in the morning?",
  acne_treatment: 'my chin keeps breaking out in spots, how do I make it stop?',
  sunscreen_review: 'why does my sun cream leave a white film all over my face?',
  retinol_guide: 'is it worth trying a vitamin A serum for the first time?',
  skin_barrier_repair: 'my face feels tight and stings after washing, how do I fix it?',
  // beauty
  everyday_makeup_look: "what's a quick natural makeup look I can do in five minutes?",
  drugstore_makeup_dupes: 'are there cheap foundations that look as good as the pricey ones?',
  eyeliner_tutorial: 'how do I get both cat eye flicks to match?',
  long_wear_foundation_test: 'why does my foundation slide off by lunchtime when it is humid?',
  bridal_makeup: 'what makeup should I wear on my wedding day so it lasts all night?',
  hair_styling_tutorial: 'can you get curls while you sleep without a curling iron?',
  // fashion
  capsule_wardrobe: 'how do I make lots of different outfits from just a few clothes?',
  outfit_ideas: 'what should I wear to the office that also works on weekends?',
  thrift_haul: 'any tips for finding good clothes in secondhand shops on a budget?',
  fall_fashion_trends: 'what are people wearing this autumn?',
  styling_basics: 'how can I make a plain white tee look less boring?',
  sustainable_fashion: 'how can I buy fewer clothes and make the ones I have last longer?',
  // fitness
  strength_training: "what's the best way to start lifting weights as a total beginner?",
  home_workout: "can you get fit at home when you don't own any gym equipment?",
  glute_workout: 'which exercises actually make your bum bigger and rounder?',
  running_training_plan: 'how should I train to run 10 km for the first time?',
  mobility_routine: 'my hips feel stiff when I squat, what stretches should I do before lifting?',
  pilates_workout: 'pilates or yoga for a stronger core and better posture?',
  // nutrition
  high_protein_breakfast: 'what can I eat in the morning to get more protein in?',
  gut_health: 'which foods help with bloating and keep your stomach healthy?',
  healthy_snacks: "which snacks keep you full between meals so you don't keep grazing?",
  weight_loss_nutrition: 'best way to lose weight without giving up the food I like?',
  supplement_review: 'are vitamin pills and powders like creatine actually worth taking?',
  blood_sugar_balance: 'why does my energy crash so hard after eating lunch?',
  // home_cooking
  budget_meal_prep: 'what cheap lunches can I cook on sunday for the whole work week?',
  one_pot_pasta: 'can you cook the pasta and the sauce together in the same pan?',
  sourdough_baking: 'my homemade bread starter just sits there and never bubbles, what am I doing wrong?',
  weeknight_dinners: 'what is a fast dinner I can make after work in half an hour?',
  air_fryer_recipes: 'what else can I cook in an air fryer besides chips?',
  dessert_recipes: "what's an easy sweet treat I can make with only a few ingredients?",
  // parenting
  toddler_activities: 'how do I keep a two year old busy indoors on a rainy day?',
  baby_sleep_routine: 'my baby fights going to bed every night, what should I try?',
  picky_eater_tips: 'what should I do if my kid refuses to eat anything new?',
  gentle_parenting: 'what do I say to my child during a tantrum instead of shouting?',
  family_routines: 'any tips for getting the kids out the door on time in the morning?',
  school_lunch_ideas: "what can I pack in my kid's lunchbox that they'll actually eat?",
  // travel
  budget_travel_tips: 'how can I see the world on a budget when flights cost so much?',
  europe_itinerary: "what's a good one week route through portugal by train?",
  packing_tips: 'how do I fit two weeks of clothes into a small cabin bag?',
  hidden_gems: 'where do locals eat and swim away from the tourist crowds?',
  solo_travel: 'is it weird or unsafe to go on holiday completely by myself?',
  japan_travel_guide: 'what should I know before my first trip to japan?',
  // personal_finance
  budgeting_method: "what's the simplest way to split up my paycheck each month?",
  index_fund_investing: 'is it worth putting my savings in a fund that tracks the whole stock market?',
  debt_payoff: 'should I clear the smallest credit card or the highest interest one first?',
  emergency_fund: 'how much cash should I keep saved in case I lose my job?',
  side_hustle_ideas: 'what are easy ways to make extra money on the weekends?',
  frugal_living: 'my money runs out before payday every month, how do I spend less?',
  // gaming
  game_review: 'is the new open world game actually worth buying at full price?',
  pc_build_guide: 'how do I put together my own gaming computer on a budget?',
  speedrun_tips: 'how do people beat games so fast using skips and glitches?',
  cozy_games: 'what are some relaxing farming games to unwind with after work?',
  fps_aim_training: 'why does my aim feel so bad in shooters and how do I improve?',
  gaming_setup_tour: 'how do I hide all the messy cables under my desk?',
  // tech_reviews
  smartphone_review: 'which new phone has the best battery and camera right now?',
  budget_laptop_review: 'which laptop should a college student buy without spending a fortune?',
  wireless_earbuds_comparison: 'in-ear headphones or over-ear ones for blocking out noise on the train?',
  smart_home_setup: 'how do I get my lights and doorbell to work from my phone?',
  productivity_apps: 'which apps help you stay focused and organized during the day?',
  ai_tools: "can you use a chatbot to write emails when you're swamped at work?",
  // diy_crafts
  home_decor_diy: 'best way to decorate a rented flat without losing the deposit?',
  crochet_pattern: "what's an easy crochet blanket to make as a complete beginner?",
  furniture_flip: 'how do I repaint an old secondhand dresser so it looks new?',
  candle_making: 'why does my homemade candle sink in the middle and barely smell?',
  woodworking_project: 'how hard is it to build a wooden wall shelf with basic tools?',
  upcycling_ideas: 'what can I make out of old jars and t-shirts instead of throwing them out?',
  // pets
  puppy_training: 'my new puppy keeps peeing inside the house, what am I doing wrong?',
  leash_reactivity: 'why does my dog bark and lunge at other dogs on walks?',
  cat_enrichment: 'how do I stop my indoor cat from getting bored all day?',
  dog_food_review: 'fresh dog food or dry kibble, which one is actually healthier?',
  pet_grooming: "how do I cut my dog's nails at home without stressing him out?",
  rescue_dog_story: 'what are the first weeks like after adopting a scared shelter dog?',
  // photography
  phone_photography_tips: 'any easy tricks for taking nicer pictures with just my phone?',
  portrait_lighting: 'how do I light a face nicely for photos using a window and one lamp?',
  photo_editing_tutorial: 'how do I edit my pictures so they look like old film?',
  film_photography: 'is it worth getting into film with a cheap point and shoot camera?',
  camera_gear_review: 'which small light camera and lens are best to take travelling?',
  street_photography: 'best way to photograph strangers in the city without them noticing?',
  // music_production
  beat_making_tutorial: 'how do I make a chill lofi beat from a chopped up sample?',
  mixing_vocals: "why does my singing sound like it's sitting on top of the music?",
  home_studio_setup: 'what gear do I need to record songs in my bedroom cheaply?',
  synth_sound_design: 'how do I make a warm soft pad sound on a synthesizer?',
  daw_workflow: 'any tips for working faster in music software with templates and shortcuts?',
  songwriting_process: 'should I write the chorus or the verse first when starting a song?',
};
