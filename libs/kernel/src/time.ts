/** Unix seconds, the public time unit of every resource and event (`created`). */
export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);
