/**
 * The Snowball project's stop word lists for Spanish and Portuguese (https://snowballstem.org,
 * BSD license: https://snowballstem.org/license.html), as Lucene 10.4.0 ships them
 * (`org/apache/lucene/analysis/snowball/{spanish,portuguese}_stop.txt` in lucene-analysis-common,
 * the `_spanish_` and `_portuguese_` stop sets of Elasticsearch). Words only, in the lists' order
 * (commonest first); the files' comments are left out.
 *
 * Why here (src/text/function-words.ts): the `stopword` package's Spanish (59 words) and Portuguese
 * (106) lists are truncated subsets of these, where its Italian, French and German lists hold all of
 * Snowball's; "¿cómo empiezo con fotografía si soy principiante?" kept "soy" (I am) as a word of
 * what it asks.
 */

const words = (list: string): readonly string[] => list.split(/\s+/).filter(Boolean);

/** Snowball's Spanish stop words (308). */
export const SNOWBALL_SPANISH = words(`
de la que el en y a los del se las por un para con no una su al lo como más pero sus le ya o
este sí porque esta entre cuando muy sin sobre también me hasta hay donde quien desde todo nos
durante todos uno les ni contra otros ese eso ante ellos e esto mí antes algunos qué unos yo
otro otras otra él tanto esa estos mucho quienes nada muchos cual poco ella estar estas algunas
algo nosotros mi mis tú te ti tu tus ellas nosotras vosotros vosotras os mío mía míos mías tuyo
tuya tuyos tuyas suyo suya suyos suyas nuestro nuestra nuestros nuestras vuestro vuestra
vuestros vuestras esos esas estoy estás está estamos estáis están esté estés estemos estéis
estén estaré estarás estará estaremos estaréis estarán estaría estarías estaríamos estaríais
estarían estaba estabas estábamos estabais estaban estuve estuviste estuvo estuvimos
estuvisteis estuvieron estuviera estuvieras estuviéramos estuvierais estuvieran estuviese
estuvieses estuviésemos estuvieseis estuviesen estando estado estada estados estadas estad he
has ha hemos habéis han haya hayas hayamos hayáis hayan habré habrás habrá habremos habréis
habrán habría habrías habríamos habríais habrían había habías habíamos habíais habían hube
hubiste hubo hubimos hubisteis hubieron hubiera hubieras hubiéramos hubierais hubieran hubiese
hubieses hubiésemos hubieseis hubiesen habiendo habido habida habidos habidas soy eres es somos
sois son sea seas seamos seáis sean seré serás será seremos seréis serán sería serías seríamos
seríais serían era eras éramos erais eran fui fuiste fue fuimos fuisteis fueron fuera fueras
fuéramos fuerais fueran fuese fueses fuésemos fueseis fuesen siendo sido tengo tienes tiene
tenemos tenéis tienen tenga tengas tengamos tengáis tengan tendré tendrás tendrá tendremos
tendréis tendrán tendría tendrías tendríamos tendríais tendrían tenía tenías teníamos teníais
tenían tuve tuviste tuvo tuvimos tuvisteis tuvieron tuviera tuvieras tuviéramos tuvierais
tuvieran tuviese tuvieses tuviésemos tuvieseis tuviesen teniendo tenido tenida tenidos tenidas
tened
`);

/** Snowball's Portuguese stop words (203). */
export const SNOWBALL_PORTUGUESE = words(`
de a o que e do da em um para com não uma os no se na por mais as dos como mas ao ele das à seu
sua ou quando muito nos já eu também só pelo pela até isso ela entre depois sem mesmo aos seus
quem nas me esse eles você essa num nem suas meu às minha numa pelos elas qual nós lhe deles
essas esses pelas este dele tu te vocês vos lhes meus minhas teu tua teus tuas nosso nossa
nossos nossas dela delas esta estes estas aquele aquela aqueles aquelas isto aquilo estou está
estamos estão estive esteve estivemos estiveram estava estávamos estavam estivera estivéramos
esteja estejamos estejam estivesse estivéssemos estivessem estiver estivermos estiverem hei há
havemos hão houve houvemos houveram houvera houvéramos haja hajamos hajam houvesse houvéssemos
houvessem houver houvermos houverem houverei houverá houveremos houverão houveria houveríamos
houveriam sou somos são era éramos eram fui foi fomos foram fora fôramos seja sejamos sejam
fosse fôssemos fossem for formos forem serei será seremos serão seria seríamos seriam tenho tem
temos tém tinha tínhamos tinham tive teve tivemos tiveram tivera tivéramos tenha tenhamos
tenham tivesse tivéssemos tivessem tiver tivermos tiverem terei terá teremos terão teria
teríamos teriam
`);
