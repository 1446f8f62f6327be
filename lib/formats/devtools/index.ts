export { cpuprofileAdapter } from './cpuprofile';
export { heapprofileAdapter } from './heapprofile';
