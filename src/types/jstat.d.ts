// jstat ships no type declarations; ragtrail uses only the Student t CDF (eval/stats.ts).
declare module 'jstat' {
  const jstat: { jStat: { studentt: { cdf(x: number, dof: number): number; inv(p: number, dof: number): number } } };
  export default jstat;
}
