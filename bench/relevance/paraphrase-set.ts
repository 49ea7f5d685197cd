/**
 * The held-out question set (bench/relevance.md, "Questions phrased in the asker's own words"):
 * one question per topic of the demo's catalog, all 90, written as people ask without the topic's
 * own words where they have others ("how do I get rid of pimples fast?" for the acne routine,
 * "what should I eat for better digestion?" for gut health), with the generic words questions
 * carry (fast, better, quick, cheap, good, first time, actually, help). Judged by the generator's
 * topic and niche labels, like the social set's questions, and compared with the same topics as
 * noun phrases (the topic's phrase).
 *
 * Never used to choose anything: a relevance change is tuned on the social set's templated
 * questions (social-set.ts) and SciFact, then reported on this set too.
 */

/** Topic id → a question about it in the asker's own words. */
export const PARAPHRASED_QUESTIONS: Readonly<Record<string, string>> = {
  // skincare
  night_skincare_routine: 'what should I put on my face before going to sleep?',
  morning_skincare_routine: "what's a quick routine for my face when I wake up?",
  acne_treatment: 'how do I get rid of pimples fast?',
  sunscreen_review: "which sun protection doesn't leave a white film on darker skin?",
  retinol_guide: 'first time using retinoids, how often is safe?',
  skin_barrier_repair: 'my face stings and feels damaged after too many acids, how do I heal it?',
  // makeup and beauty
  everyday_makeup_look: 'simple natural makeup for work that takes five minutes?',
  drugstore_makeup_dupes: 'cheaper copies of luxury cosmetics that are just as good?',
  eyeliner_tutorial: 'how do I draw a cat eye that looks even on both sides?',
  long_wear_foundation_test: "which base stays put all day when it's hot and sticky?",
  bridal_makeup: 'what makeup holds up best for a wedding day?',
  hair_styling_tutorial: 'how can I get waves in my hair without a curling iron?',
  // fashion
  capsule_wardrobe: 'how can I own fewer clothes but still have lots of outfits?',
  outfit_ideas: "what should I wear to the office this week that isn't boring?",
  thrift_haul: 'best finds at secondhand shops and how to tell good quality?',
  fall_fashion_trends: "what's in style this autumn?",
  styling_basics: 'different ways to wear a plain tee?',
  sustainable_fashion: 'how do I shop for clothes more ethically?',
  // fitness
  strength_training: 'never lifted before, where do I start with weights?',
  home_workout: 'good exercises I can do in my living room with no gym?',
  glute_workout: 'best moves to grow my butt faster?',
  running_training_plan: 'how do I train to run 10 kilometres for the first time?',
  mobility_routine: 'quick stretches to loosen stiff hips before the gym?',
  pilates_workout: 'gentle core exercises that are easy on the joints?',
  // nutrition
  high_protein_breakfast: 'what can I eat in the morning to get more protein?',
  gut_health: 'what should I eat for better digestion?',
  healthy_snacks: 'good things to munch between meals that keep me full?',
  weight_loss_nutrition: 'how do I lose weight without starving myself?',
  supplement_review: 'do pills like creatine really work?',
  blood_sugar_balance: 'what meals stop the tired slump after lunch?',
  // home cooking
  budget_meal_prep: 'how can I cook a week of lunches on a small budget?',
  one_pot_pasta: 'quick noodle dinner with only one pan to wash?',
  sourdough_baking: 'how do I bake my own crusty loaf with a starter?',
  weeknight_dinners: 'fast dinners for busy work nights?',
  air_fryer_recipes: 'what can I cook in my new airfryer?',
  dessert_recipes: 'simple sweet treat I can make without an oven?',
  // parenting
  toddler_activities: 'how do I keep a two year old busy indoors?',
  baby_sleep_routine: 'how do I get my newborn to sleep through the night?',
  picky_eater_tips: 'my kid refuses vegetables, what helps?',
  gentle_parenting: 'what do I say when my child screams instead of shouting back?',
  family_routines: 'how can school mornings with kids be less chaotic?',
  school_lunch_ideas: 'what to pack in a lunchbox that children will actually eat?',
  // travel
  budget_travel_tips: 'how can I see the world without spending much?',
  europe_itinerary: 'one week in Portugal by rail, what route?',
  packing_tips: 'how do I fit two weeks of clothes in a small suitcase?',
  hidden_gems: 'where can I find quiet spots away from the crowds?',
  solo_travel: 'is it safe to go on a trip by myself?',
  japan_travel_guide: 'first trip to Tokyo and Kyoto, what should I know?',
  // personal finance
  budgeting_method: 'simple way to plan where my paycheck goes each month?',
  index_fund_investing: 'how should a beginner start putting money in the stock market?',
  debt_payoff: 'fastest way to clear my credit card balance?',
  emergency_fund: 'how much cash should I keep aside for a rainy day?',
  side_hustle_ideas: 'ways to earn extra money on weekends?',
  frugal_living: 'how do I spend less every month?',
  // gaming
  game_review: 'is that new fantasy adventure game any good after many hours?',
  pc_build_guide: 'what parts do I need to put together a cheap computer for games?',
  speedrun_tips: 'how do people finish games so quickly with glitches?',
  cozy_games: 'relaxing games to unwind after work?',
  fps_aim_training: 'how do I get better accuracy in shooters?',
  gaming_setup_tour: 'how do I make my desk look clean with all these cables?',
  // tech reviews
  smartphone_review: 'which new phone has the best battery and camera?',
  budget_laptop_review: 'good cheap notebook computer for college?',
  wireless_earbuds_comparison: 'which bluetooth headphones block out noise best?',
  smart_home_setup: 'how do I automate my house lights and doorbell?',
  productivity_apps: 'which apps help me focus and organise my day?',
  ai_tools: 'can chatbots help me write emails faster at my job?',
  // DIY and crafts
  home_decor_diy: 'cheap ways to make my rented apartment look nicer?',
  crochet_pattern: 'easy first project for learning to hook yarn?',
  furniture_flip: 'how do I repaint an old wooden dresser?',
  candle_making: 'how do I make scented candles myself?',
  woodworking_project: 'simple shelf I can build with basic tools?',
  upcycling_ideas: 'what can I make from old jars and clothes instead of throwing them away?',
  // pets
  puppy_training: 'how do I housebreak my new puppy quickly?',
  leash_reactivity: 'my dog barks and lunges at other dogs on walks, help?',
  cat_enrichment: 'how do I keep an indoor cat entertained?',
  dog_food_review: 'what is the healthiest food for my dog?',
  pet_grooming: "how do I clip my dog's nails without stressing him out?",
  rescue_dog_story: 'tips for the first weeks with a nervous adopted dog?',
  // photography
  phone_photography_tips: 'how do I take better pictures with my phone?',
  portrait_lighting: 'how do I light a headshot at home?',
  photo_editing_tutorial: 'how do I give my pictures a vintage look when editing?',
  film_photography: 'which analog camera is good to start shooting film?',
  camera_gear_review: 'best small camera and lens for travel?',
  street_photography: 'how do I take candid photos of strangers in the city?',
  // music production
  beat_making_tutorial: 'how do I make a chill hip hop instrumental from a sample?',
  mixing_vocals: 'how can I make my singing sound more professional in the mix?',
  home_studio_setup: 'what gear do I need to record music in my bedroom?',
  synth_sound_design: 'how do I create a warm pad sound on a synthesizer?',
  daw_workflow: 'how can I work faster in Ableton?',
  songwriting_process: 'how do I write a catchy chorus?',
};
