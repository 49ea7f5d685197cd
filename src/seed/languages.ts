import type { CtaAction } from './vocabulary.ts';

/**
 * Per-language word lists of the demo dataset. English captions are built from the richer
 * templates of vocabulary.ts; the other languages use these small packs, which keep the niche
 * vocabulary so that a post's language and topic stay coherent.
 */

/** A declared location, as in spec 2.2. */
export interface Place {
  country_code: string;
  region_code: string;
  locality: string;
}

/** Every line a caption, bio or transcript needs in one language. */
export interface LanguagePack {
  code: string;
  name: string;
  /** Share of accounts publishing primarily in this language. */
  weight: number;
  firstNames: readonly string[];
  lastNames: readonly string[];
  places: readonly Place[];
  /** Niche id → a short noun phrase for that niche. */
  niches: Readonly<Record<string, string>>;
  /** Hooks in four fixed slots: direct, curiosity gap, listicle, time promise. */
  hooks: readonly [(t: string) => string, (t: string) => string, (t: string) => string, (t: string) => string];
  bodies: readonly ((t: string, item: string) => string)[];
  spoken: readonly ((t: string, item: string) => string)[];
  ctas: Readonly<Record<CtaAction, (handle: string) => string>>;
  offer: (pct: number, code: string, brand: string) => string;
  partnership: (brand: string) => string;
  mention: (handle: string) => string;
  bio: (t: string, city: string) => string;
  tags: readonly string[];
}

/** Devices and English descriptions of the four hook slots of {@link LanguagePack.hooks}. */
export const HOOK_SLOTS: readonly { devices: readonly string[]; construction: (label: string) => string }[] = [
  { devices: ['direct_address'], construction: (l) => `Introduces the creator's own ${l} routine in the first line.` },
  { devices: ['curiosity_gap'], construction: (l) => `Promises an overlooked truth about ${l}.` },
  { devices: ['listicle_promise'], construction: (l) => `Promises three common ${l} mistakes to avoid.` },
  { devices: ['time_promise'], construction: (l) => `Promises to explain ${l} in sixty seconds.` },
];

const EN: LanguagePack = {
  code: 'en',
  name: 'English',
  weight: 62,
  firstNames: [
    'Maya',
    'Lucas',
    'Emma',
    'Noah',
    'Olivia',
    'Liam',
    'Ava',
    'Ethan',
    'Chloe',
    'Jordan',
    'Harper',
    'Mason',
    'Zoe',
    'Caleb',
    'Priya',
    'Marcus',
    'Aisha',
    'Tyler',
    'Grace',
    'Devon',
    'Sophie',
    'Jamal',
    'Lily',
    'Ryan',
  ],
  lastNames: [
    'Carter',
    'Nguyen',
    'Brooks',
    'Patel',
    'Reed',
    'Hughes',
    'Kim',
    'Foster',
    'Morgan',
    'Bennett',
    'Ellis',
    'Shaw',
    'Rivera',
    'Cole',
  ],
  places: [
    { country_code: 'US', region_code: 'US-CA', locality: 'Los Angeles' },
    { country_code: 'US', region_code: 'US-NY', locality: 'New York' },
    { country_code: 'US', region_code: 'US-TX', locality: 'Austin' },
    { country_code: 'GB', region_code: 'GB-LND', locality: 'London' },
    { country_code: 'CA', region_code: 'CA-ON', locality: 'Toronto' },
    { country_code: 'AU', region_code: 'AU-NSW', locality: 'Sydney' },
    { country_code: 'US', region_code: 'US-IL', locality: 'Chicago' },
  ],
  niches: {
    skincare: 'skincare',
    beauty: 'makeup',
    fashion: 'style',
    fitness: 'fitness',
    nutrition: 'nutrition',
    home_cooking: 'home cooking',
    parenting: 'parenting',
    travel: 'travel',
    personal_finance: 'money',
    gaming: 'gaming',
    tech_reviews: 'tech',
    diy_crafts: 'DIY',
    pets: 'pet care',
    photography: 'photography',
    music_production: 'music production',
  },
  hooks: [
    (t) => `My ${t} routine ✨`,
    (t) => `Nobody tells you this about ${t}`,
    (t) => `3 ${t} mistakes to avoid`,
    (t) => `${t} explained in 60 seconds`,
  ],
  bodies: [(t, i) => `Everything I use for ${t}, starting with the ${i}.`],
  spoken: [(t, i) => `So today we're talking ${t}, and the ${i} is the star.`],
  ctas: {
    save_post: () => 'Save this for later 📌',
    visit_profile_link: () => 'Link in bio 🔗',
    follow_account: (h) => `Follow @${h} for more`,
    comment_keyword: () => 'Comment "LIST" for the details',
    share_post: () => 'Share this with a friend',
  },
  offer: (p, c, b) => `Use code ${c} for ${p}% off at ${b} 🛍️`,
  partnership: (b) => `#ad In partnership with ${b}`,
  mention: (h) => `🎥 with @${h}`,
  bio: (t, c) => `${t} that actually works | ${c} 📍`,
  tags: ['fyp', 'explore', 'tips'],
};

const ES: LanguagePack = {
  code: 'es',
  name: 'Spanish',
  weight: 12,
  firstNames: [
    'Lucía',
    'Mateo',
    'Sofía',
    'Diego',
    'Valentina',
    'Javier',
    'Camila',
    'Pablo',
    'Martina',
    'Andrés',
    'Elena',
    'Carlos',
  ],
  lastNames: ['García', 'Martínez', 'López', 'Sánchez', 'Romero', 'Torres', 'Navarro', 'Ruiz'],
  places: [
    { country_code: 'ES', region_code: 'ES-MD', locality: 'Madrid' },
    { country_code: 'ES', region_code: 'ES-CT', locality: 'Barcelona' },
    { country_code: 'MX', region_code: 'MX-CMX', locality: 'Ciudad de México' },
    { country_code: 'AR', region_code: 'AR-C', locality: 'Buenos Aires' },
    { country_code: 'CO', region_code: 'CO-DC', locality: 'Bogotá' },
  ],
  niches: {
    skincare: 'cuidado de la piel',
    beauty: 'maquillaje',
    fashion: 'moda',
    fitness: 'entrenamiento',
    nutrition: 'nutrición',
    home_cooking: 'cocina casera',
    parenting: 'crianza',
    travel: 'viajes',
    personal_finance: 'finanzas personales',
    gaming: 'videojuegos',
    tech_reviews: 'tecnología',
    diy_crafts: 'manualidades',
    pets: 'mascotas',
    photography: 'fotografía',
    music_production: 'producción musical',
  },
  hooks: [
    (t) => `Mi rutina de ${t} ✨`,
    (t) => `Lo que nadie te cuenta sobre ${t}`,
    (t) => `3 errores de ${t} que debes evitar`,
    (t) => `${t} en 60 segundos`,
  ],
  bodies: [
    (t, i) => `Hoy os enseño cómo uso el ${i} en mi día a día. Todo sobre ${t}, sin filtros.`,
    (t, i) => `Llevo meses probando esto y el ${i} lo cambió todo. Mis consejos de ${t}.`,
  ],
  spoken: [
    (t) => `Hola a todos, hoy hablamos de ${t}.`,
    (_t, i) => `Lo más importante es el ${i}, de verdad.`,
    (t) => `Si te gusta el contenido de ${t}, quédate hasta el final.`,
  ],
  ctas: {
    save_post: () => 'Guárdalo para después 📌',
    visit_profile_link: () => 'Más info en el link de mi perfil 🔗',
    follow_account: (h) => `Sígueme en @${h} para más`,
    comment_keyword: () => 'Comenta "LISTA" y te lo mando',
    share_post: () => 'Compártelo con quien lo necesite',
  },
  offer: (p, c, b) => `Usa el código ${c} para un ${p}% de descuento en ${b} 🛍️`,
  partnership: (b) => `#publi Colaboración pagada con ${b}`,
  mention: (h) => `🎥 con @${h}`,
  bio: (t, c) => `Consejos de ${t} | ${c} 📍`,
  tags: ['parati', 'consejos', 'viral'],
};

const PT: LanguagePack = {
  code: 'pt',
  name: 'Portuguese',
  weight: 8,
  firstNames: ['Ana', 'João', 'Beatriz', 'Gabriel', 'Mariana', 'Rafael', 'Larissa', 'Thiago', 'Júlia', 'Pedro'],
  lastNames: ['Silva', 'Santos', 'Oliveira', 'Souza', 'Costa', 'Ferreira', 'Almeida'],
  places: [
    { country_code: 'BR', region_code: 'BR-SP', locality: 'São Paulo' },
    { country_code: 'BR', region_code: 'BR-RJ', locality: 'Rio de Janeiro' },
    { country_code: 'PT', region_code: 'PT-11', locality: 'Lisboa' },
    { country_code: 'PT', region_code: 'PT-13', locality: 'Porto' },
  ],
  niches: {
    skincare: 'cuidados com a pele',
    beauty: 'maquiagem',
    fashion: 'moda',
    fitness: 'treino',
    nutrition: 'nutrição',
    home_cooking: 'cozinha caseira',
    parenting: 'maternidade',
    travel: 'viagens',
    personal_finance: 'finanças pessoais',
    gaming: 'games',
    tech_reviews: 'tecnologia',
    diy_crafts: 'artesanato',
    pets: 'pets',
    photography: 'fotografia',
    music_production: 'produção musical',
  },
  hooks: [
    (t) => `Minha rotina de ${t} ✨`,
    (t) => `O que ninguém te conta sobre ${t}`,
    (t) => `3 erros de ${t} para evitar`,
    (t) => `${t} em 60 segundos`,
  ],
  bodies: [
    (t, i) => `Hoje vou mostrar como uso o ${i} no dia a dia. Tudo sobre ${t}.`,
    (t, i) => `Testei por meses e o ${i} mudou tudo. Minhas dicas de ${t}.`,
  ],
  spoken: [
    (t) => `Oi gente, hoje o assunto é ${t}.`,
    (_t, i) => `O segredo mesmo é o ${i}.`,
    (t) => `Se você curte ${t}, fica até o final.`,
  ],
  ctas: {
    save_post: () => 'Salva pra ver depois 📌',
    visit_profile_link: () => 'Link na bio 🔗',
    follow_account: (h) => `Me segue em @${h} pra mais`,
    comment_keyword: () => 'Comenta "LISTA" que eu te mando',
    share_post: () => 'Manda pra quem precisa ver isso',
  },
  offer: (p, c, b) => `Use o cupom ${c} e ganhe ${p}% de desconto na ${b} 🛍️`,
  partnership: (b) => `#publi Parceria paga com ${b}`,
  mention: (h) => `🎥 com @${h}`,
  bio: (t, c) => `Dicas de ${t} | ${c} 📍`,
  tags: ['dicas', 'viral', 'foryou'],
};

const FR: LanguagePack = {
  code: 'fr',
  name: 'French',
  weight: 6,
  firstNames: ['Camille', 'Louis', 'Léa', 'Hugo', 'Chloé', 'Arthur', 'Manon', 'Jules', 'Inès', 'Théo'],
  lastNames: ['Martin', 'Bernard', 'Dubois', 'Moreau', 'Laurent', 'Lefèvre', 'Girard'],
  places: [
    { country_code: 'FR', region_code: 'FR-75', locality: 'Paris' },
    { country_code: 'FR', region_code: 'FR-69', locality: 'Lyon' },
    { country_code: 'CA', region_code: 'CA-QC', locality: 'Montréal' },
    { country_code: 'BE', region_code: 'BE-BRU', locality: 'Bruxelles' },
  ],
  niches: {
    skincare: 'soin de la peau',
    beauty: 'maquillage',
    fashion: 'mode',
    fitness: 'musculation',
    nutrition: 'nutrition',
    home_cooking: 'cuisine maison',
    parenting: 'parentalité',
    travel: 'voyage',
    personal_finance: 'finances personnelles',
    gaming: 'jeux vidéo',
    tech_reviews: 'high-tech',
    diy_crafts: 'DIY',
    pets: 'animaux',
    photography: 'photographie',
    music_production: 'production musicale',
  },
  hooks: [
    (t) => `Ma routine ${t} ✨`,
    (t) => `Ce que personne ne dit sur ${t}`,
    (t) => `3 erreurs en ${t} à éviter`,
    (t) => `${t} en 60 secondes`,
  ],
  bodies: [
    (t, i) => `Je vous montre comment j'utilise le ${i} au quotidien. Tout sur ${t}.`,
    (t, i) => `Après des mois de tests, le ${i} a tout changé. Mes conseils ${t}.`,
  ],
  spoken: [
    (t) => `Salut tout le monde, aujourd'hui on parle de ${t}.`,
    (_t, i) => `Le plus important, c'est le ${i}.`,
    (t) => `Si vous aimez le contenu ${t}, restez jusqu'à la fin.`,
  ],
  ctas: {
    save_post: () => 'Enregistre pour plus tard 📌',
    visit_profile_link: () => 'Lien dans la bio 🔗',
    follow_account: (h) => `Abonne-toi à @${h} pour la suite`,
    comment_keyword: () => 'Commente "LISTE" et je te l\'envoie',
    share_post: () => "Partage à quelqu'un qui en a besoin",
  },
  offer: (p, c, b) => `Code ${c} pour -${p}% chez ${b} 🛍️`,
  partnership: (b) => `#sponsorisé Partenariat rémunéré avec ${b}`,
  mention: (h) => `🎥 avec @${h}`,
  bio: (t, c) => `Conseils ${t} | ${c} 📍`,
  tags: ['pourtoi', 'astuces', 'conseils'],
};

const DE: LanguagePack = {
  code: 'de',
  name: 'German',
  weight: 5,
  firstNames: ['Lena', 'Jonas', 'Mia', 'Leon', 'Hannah', 'Felix', 'Lea', 'Paul', 'Emilia', 'Max'],
  lastNames: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Wagner', 'Becker'],
  places: [
    { country_code: 'DE', region_code: 'DE-BE', locality: 'Berlin' },
    { country_code: 'DE', region_code: 'DE-BY', locality: 'München' },
    { country_code: 'AT', region_code: 'AT-9', locality: 'Wien' },
    { country_code: 'CH', region_code: 'CH-ZH', locality: 'Zürich' },
  ],
  niches: {
    skincare: 'Hautpflege',
    beauty: 'Make-up',
    fashion: 'Mode',
    fitness: 'Krafttraining',
    nutrition: 'Ernährung',
    home_cooking: 'Kochen',
    parenting: 'Familienalltag',
    travel: 'Reisen',
    personal_finance: 'Finanzen',
    gaming: 'Gaming',
    tech_reviews: 'Technik',
    diy_crafts: 'DIY',
    pets: 'Haustiere',
    photography: 'Fotografie',
    music_production: 'Musikproduktion',
  },
  hooks: [
    (t) => `Meine ${t}-Routine ✨`,
    (t) => `Was dir niemand über ${t} sagt`,
    (t) => `3 Fehler beim Thema ${t}`,
    (t) => `${t} in 60 Sekunden`,
  ],
  bodies: [
    (t, i) => `Heute zeige ich euch, wie ich ${i} im Alltag nutze. Alles rund um ${t}.`,
    (t, i) => `Nach Monaten des Testens: ${i} hat alles verändert. Meine ${t}-Tipps.`,
  ],
  spoken: [
    (t) => `Hallo zusammen, heute geht es um ${t}.`,
    (_t, i) => `Das Wichtigste ist wirklich ${i}.`,
    (t) => `Wenn dir ${t} gefällt, bleib bis zum Ende.`,
  ],
  ctas: {
    save_post: () => 'Speicher dir das für später 📌',
    visit_profile_link: () => 'Link in der Bio 🔗',
    follow_account: (h) => `Folge @${h} für mehr`,
    comment_keyword: () => 'Kommentiere "LISTE" und ich schick sie dir',
    share_post: () => 'Teile das mit jemandem, der es braucht',
  },
  offer: (p, c, b) => `Mit dem Code ${c} bekommst du ${p}% Rabatt bei ${b} 🛍️`,
  partnership: (b) => `#werbung Bezahlte Partnerschaft mit ${b}`,
  mention: (h) => `🎥 mit @${h}`,
  bio: (t, c) => `${t}-Tipps | ${c} 📍`,
  tags: ['tipps', 'fürdich', 'alltag'],
};

const IT: LanguagePack = {
  code: 'it',
  name: 'Italian',
  weight: 4,
  firstNames: ['Giulia', 'Lorenzo', 'Chiara', 'Matteo', 'Sara', 'Alessandro', 'Francesca', 'Davide', 'Aurora'],
  lastNames: ['Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Conti'],
  places: [
    { country_code: 'IT', region_code: 'IT-25', locality: 'Milano' },
    { country_code: 'IT', region_code: 'IT-62', locality: 'Roma' },
    { country_code: 'IT', region_code: 'IT-72', locality: 'Napoli' },
  ],
  niches: {
    skincare: 'skincare',
    beauty: 'trucco',
    fashion: 'moda',
    fitness: 'allenamento',
    nutrition: 'alimentazione',
    home_cooking: 'cucina di casa',
    parenting: 'genitorialità',
    travel: 'viaggi',
    personal_finance: 'finanza personale',
    gaming: 'videogiochi',
    tech_reviews: 'tecnologia',
    diy_crafts: 'fai da te',
    pets: 'animali',
    photography: 'fotografia',
    music_production: 'produzione musicale',
  },
  hooks: [
    (t) => `La mia routine di ${t} ✨`,
    (t) => `Quello che nessuno ti dice su ${t}`,
    (t) => `3 errori di ${t} da evitare`,
    (t) => `${t} in 60 secondi`,
  ],
  bodies: [
    (t, i) => `Oggi vi mostro come uso il ${i} ogni giorno. Tutto su ${t}.`,
    (t, i) => `Dopo mesi di prove, il ${i} ha cambiato tutto. I miei consigli di ${t}.`,
  ],
  spoken: [
    (t) => `Ciao a tutti, oggi parliamo di ${t}.`,
    (_t, i) => `La cosa più importante è il ${i}.`,
    (t) => `Se ti piace la ${t}, resta fino alla fine.`,
  ],
  ctas: {
    save_post: () => 'Salvalo per dopo 📌',
    visit_profile_link: () => 'Link in bio 🔗',
    follow_account: (h) => `Segui @${h} per altri consigli`,
    comment_keyword: () => 'Commenta "LISTA" e te la mando',
    share_post: () => 'Condividilo con chi ne ha bisogno',
  },
  offer: (p, c, b) => `Usa il codice ${c} per avere il ${p}% di sconto su ${b} 🛍️`,
  partnership: (b) => `#adv Partnership retribuita con ${b}`,
  mention: (h) => `🎥 con @${h}`,
  bio: (t, c) => `Consigli di ${t} | ${c} 📍`,
  tags: ['perte', 'consigli', 'viral'],
};

const JA: LanguagePack = {
  code: 'ja',
  name: 'Japanese',
  weight: 3,
  firstNames: ['Yuki', 'Haruto', 'Sakura', 'Ren', 'Aoi', 'Hina', 'Sota', 'Mei', 'Riku', 'Yui'],
  lastNames: ['Tanaka', 'Sato', 'Suzuki', 'Takahashi', 'Watanabe', 'Ito', 'Nakamura'],
  places: [
    { country_code: 'JP', region_code: 'JP-13', locality: '東京' },
    { country_code: 'JP', region_code: 'JP-27', locality: '大阪' },
    { country_code: 'JP', region_code: 'JP-26', locality: '京都' },
  ],
  niches: {
    skincare: 'スキンケア',
    beauty: 'メイク',
    fashion: 'ファッション',
    fitness: '筋トレ',
    nutrition: '栄養',
    home_cooking: '自炊',
    parenting: '子育て',
    travel: '旅行',
    personal_finance: '家計管理',
    gaming: 'ゲーム',
    tech_reviews: 'ガジェット',
    diy_crafts: 'DIY',
    pets: 'ペット',
    photography: '写真',
    music_production: '音楽制作',
  },
  hooks: [
    (t) => `私の${t}ルーティン✨`,
    (t) => `${t}で誰も教えてくれないこと`,
    (t) => `${t}でやりがちな3つの失敗`,
    (t) => `60秒でわかる${t}`,
  ],
  bodies: [(t, i) => `今日は${i}を使った${t}を紹介します。`, (t, i) => `何ヶ月も試して、${i}で${t}が変わりました。`],
  spoken: [
    (t) => `こんにちは、今日は${t}の話です。`,
    (_t, i) => `一番大事なのは${i}です。`,
    (t) => `${t}が好きな人は最後まで見てね。`,
  ],
  ctas: {
    save_post: () => '保存して後で見返してね📌',
    visit_profile_link: () => '詳しくはプロフィールのリンクから🔗',
    follow_account: (h) => `@${h} をフォローしてね`,
    comment_keyword: () => '「リスト」とコメントしてね',
    share_post: () => '必要な人にシェアしてね',
  },
  offer: (p, c, b) => `クーポンコード${c}で${b}が${p}%オフ🛍️`,
  partnership: (b) => `#PR ${b}とのタイアップ投稿です`,
  mention: (h) => `🎥 with @${h}`,
  bio: (t, c) => `${t}の情報を発信中 | ${c}📍`,
  tags: ['おすすめ', '暮らし', 'ルーティン'],
};

/** Every language pack, English first. */
export const LANGUAGES: readonly LanguagePack[] = [EN, ES, PT, FR, DE, IT, JA];
/** Language weights aligned with {@link LANGUAGES}. */
export const LANGUAGE_WEIGHTS: readonly number[] = LANGUAGES.map((l) => l.weight);
/** The English pack (bilingual accounts post partly in English). */
export const ENGLISH: LanguagePack = EN;
