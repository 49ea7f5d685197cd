declare module 'wink-porter2-stemmer' {
  /** The Porter2 (Snowball English) stem of one lowercase word. */
  const stem: (word: string) => string;
  export default stem;
}
